"""lit configuration for ktile's FileCheck tests: `lit -v tests/filecheck`.

`ktile-opt` runs as `python -m ktile.tools.opt` from this checkout, so nothing needs to be
installed. The feature `mlir-opt` is present when upstream MLIR's mlir-opt is on PATH or in
Debian's LLVM 22 prefix (tests that read our output with it say `REQUIRES: mlir-opt`).
"""
import os
import shutil
import sys

import lit.formats

config.name = "ktile"  # noqa: F821 - `config` is given by lit
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

REPO_ROOT = os.path.dirname(os.path.dirname(config.test_source_root))
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (REPO_ROOT, os.environ.get("PYTHONPATH", "")) if p)
config.environment["PATH"] = os.environ.get("PATH", "")
config.substitutions.append(("ktile-opt", f"{sys.executable} -m ktile.tools.opt"))

MLIR_OPT = shutil.which("mlir-opt") or next(
    (p for p in ("/usr/lib/llvm-22/bin/mlir-opt",) if os.access(p, os.X_OK)), None)
if MLIR_OPT:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("mlir-opt", MLIR_OPT))
