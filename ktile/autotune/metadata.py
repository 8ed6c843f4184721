"""What a measured table records about where and how it was measured."""
from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path


def metadata(target: str, command: str | None = None, timer_device: str | None = None) -> dict:
    return {"command": command or " ".join(["ktile", *sys.argv[1:]]),
            "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": _device_name(timer_device),
            "torch": _torch_version(),
            "cuda_runtime": _cuda_runtime(),
            "cuda_driver": _cuda_driver(),
            "toolchain": _toolchain(target),
            "ktile_commit": _commit(),
            "python": sys.version.split()[0]}


def _device_name(device: str | None) -> str | None:
    if device != "cuda":
        return None
    import torch
    return torch.cuda.get_device_name(torch.cuda.current_device())


def _torch_version() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


def _cuda_runtime() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.version.cuda


def _cuda_driver() -> str | None:
    """The driver's CUDA version (cuDriverGetVersion), e.g. '12.8'; None without one."""
    import ctypes
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int()
    if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def _toolchain(target: str) -> str | None:
    from .. import targets
    from ..errors import KtileError
    from ..runtime.build import toolchain_for
    try:
        return toolchain_for(targets.get(target)).identity
    except (KtileError, OSError):
        return None


def _commit() -> str | None:
    """HEAD of the checkout ktile runs from, with "+dirty" where tracked files differ from it (a
    copy of a working tree laid over an older checkout, as on a lent GPU machine, reads so
    instead of naming a commit it was not measured at)."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True, text=True,
                                timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    dirty = status.returncode != 0 or bool(status.stdout.strip())
    return head.stdout.strip() + ("+dirty" if dirty else "")
