#!/usr/bin/env bash
# Installs what ktile's main job and tests need, idempotently, into .venv at the repo root:
# ktile itself (editable) with its pinned dependencies, the test tools, torch (CPU) for the
# examples' tensors, Debian's LLVM 22 packages (where apt works) and, on a machine without one,
# nvcc from PyPI's CUDA wheels. `scripts/check-tools` lists every external tool the tests use;
# scripts/run-tests runs it right after this and, under CI, stops when one is missing.
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
  # the transformers integration's tests (a tiny Qwen3 built in the test): 5.17.0 as on the
  # H200; pure Python with its hub/tokenizer deps, about 180 MB and a minute, once
  quiet_pip install -q "transformers==5.17.0" || \
    echo "setup: transformers could not be installed; its integration's tests will be skipped"
  echo "$want" > "$stamp"
fi

# Debian's LLVM 22: mlir-opt reads ktile's generic IR in one test; clang, lld and the LLVM
# tools build and check AMD code objects (`ktile cocheck`); clang++ bundles several arches'
# code objects with clang-offload-bundler (clang-tools-22). Outside CI, tests that need them
# skip, saying so, where they cannot be installed.
llvm_bin=/usr/lib/llvm-22/bin
missing=""
for pair in mlir-opt:mlir-22-tools clang++:clang-22 clang-offload-bundler:clang-tools-22 \
            ld.lld:lld-22 llvm-objdump:llvm-22; do
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

# nvcc (CUDA 12 or later, for sm_90a) builds the NVIDIA targets' tier-1 tests. Debian has none
# that knows sm_90a; PyPI's CUDA wheels hold a whole nvcc (13.0, the version this project's
# machines carry at /usr/local/cuda). Where no nvcc is found, they go into .venv, and
# .venv/bin/nvcc runs it (a wrapper, not a link: nvcc finds its headers next to itself).
nvcc_wheels="nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96
             nvidia-nvvm==13.0.88 nvidia-cuda-cccl==13.0.85"
if [ -z "${KTILE_NVCC:-}" ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] \
   && [ ! -x "$venv/bin/nvcc" ]; then
  echo "setup: no nvcc here: installing PyPI's CUDA 13.0 nvcc into .venv"
  if quiet_pip install -q $nvcc_wheels; then
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    printf '#!/bin/sh\nexec "%s/nvidia/cu13/bin/nvcc" "$@"\n' "$site" > "$venv/bin/nvcc"
    chmod +x "$venv/bin/nvcc"
  else
    echo "setup: could not install nvcc; install CUDA 12 or later, or set KTILE_NVCC"
  fi
fi
