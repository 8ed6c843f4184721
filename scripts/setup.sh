#!/usr/bin/env bash
# Installs what ktile's main job and tests need, idempotently, into .venv at the repo root:
# ktile itself (editable) with its pinned dependencies, the test tools, torch (CPU) for the
# examples' tensors, and — where apt works — Debian's mlir-22-tools for the interop test.
# A second run with nothing changed returns in about a second.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${KTILE_PYTHON:-python3}"
venv="$root/.venv"
stamp="$venv/.ktile-setup"
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"

# pip's output only when it fails (this machine's extra indexes warn about every package)
quiet_pip() {
  local log; log="$(mktemp)"
  if ! "$venv/bin/python" -m pip "$@" >"$log" 2>&1; then
    grep -v "WARNING: Location" "$log" >&2; rm -f "$log"; return 1
  fi
  rm -f "$log"
}

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing ktile and its test tools into .venv"
  quiet_pip install -q --upgrade pip
  quiet_pip install -q -e ".[test]"
  quiet_pip install -q "torch==2.13.0" || \
    echo "setup: torch could not be installed; examples that need bf16 tensors will be skipped"
  echo "$want" > "$stamp"
fi

# Debian's LLVM 22: mlir-opt reads ktile's generic IR in one test; clang, lld and the LLVM
# tools build and check AMD code objects (`ktile cocheck`). Tests that need them skip, saying
# so, where they cannot be installed.
llvm_bin=/usr/lib/llvm-22/bin
missing=""
for pair in mlir-opt:mlir-22-tools clang++:clang-22 ld.lld:lld-22 llvm-objdump:llvm-22; do
  [ -x "$llvm_bin/${pair%%:*}" ] || missing="$missing ${pair##*:}"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's$missing"
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing) \
      >/dev/null 2>&1 || echo "setup: could not install$missing; the tests that need them skip"
  else
    echo "setup: not root or no apt-get: install$missing for the tests that need them"
  fi
fi
