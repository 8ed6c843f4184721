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

# Upstream mlir-opt reads ktile's generic IR in one test; it runs where this is installed.
if ! ls /usr/lib/llvm-22/bin/mlir-opt >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's mlir-22-tools"
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends mlir-22-tools) \
      >/dev/null 2>&1 || echo "setup: mlir-22-tools not installed; the interop test will skip"
  fi
fi
