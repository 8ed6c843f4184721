"""How the non-norm ops launch a kernel: through `_library.run` (so a test's wave emulation,
`_library.emulating(target)`, runs them end to end), naming a target only where the call has
one of its own: a GPU's, a warm-up's, or the fp8 interpreter's (`quant.op.fp8_target`). Under
emulation the emulated target replaces the call's: the emulator runs exactly one target."""
from __future__ import annotations

from .. import _library as lib


def run_kernel(kernel, *args, target: str | None = None, **constants) -> None:
    if target is None or lib._RUNNER:
        lib.run(kernel, *args, **constants)
        return
    lib.run(kernel, *args, target=target, **constants)
