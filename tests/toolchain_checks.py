"""Whether a toolchain the tier-1 build tests need is on this machine (their skip marks)."""
from ktile.errors import KernelError
from ktile.runtime.toolchains import nvcc


def has_nvcc() -> bool:
    """nvcc found (PATH or KTILE_NVCC): the sm_90a builds can run."""
    try:
        nvcc.find_nvcc()
    except KernelError:
        return False
    return True
