"""Element types a kernel is written in, and how each one rounds.

One table: its name in Python, in the IR, in C++, its width, and the rounding the interpreter
applies when a value is stored at that type. Everything that asks "what is bf16" asks here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where values are rounded, not at `import ktile`
    import numpy as np


@dataclass(frozen=True)
class DType:
    name: str          # as the kernel author writes it: hk.bf16
    ir: str            # as the IR prints it: bf16, f32, i32
    bits: int
    kind: str          # "float", "int" or "bool"
    cpp: str           # the scalar type name in the tile headers
    torch_name: str    # attribute of the torch module, "" where torch has none

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def __repr__(self) -> str:
        return f"hk.{self.name}"

    def round(self, values: np.ndarray) -> np.ndarray:
        """Values as they would read back after a store at this type (fp32 carrier)."""
        import numpy as np
        return _ROUNDERS[self.name](np.asarray(values))


bf16 = DType("bf16", "bf16", 16, "float", "bf16", "bfloat16")
fp16 = DType("fp16", "f16", 16, "float", "half", "float16")
fp32 = DType("fp32", "f32", 32, "float", "float", "float32")
fp8 = DType("fp8", "f8E4M3FN", 8, "float", "fp8e4m3", "float8_e4m3fn")
i32 = DType("i32", "i32", 32, "int", "int32_t", "int32")
i8 = DType("i8", "i8", 8, "int", "int8_t", "int8")
i1 = DType("bool", "i1", 1, "bool", "bool", "bool")

ALL = (bf16, fp16, fp32, fp8, i32, i8, i1)
BY_NAME = {d.name: d for d in ALL}
BY_IR = {d.ir: d for d in ALL}
# hk-dsl spellings that mean the same type
ALIASES = {"float32": fp32, "f32": fp32, "float16": fp16, "f16": fp16, "bfloat16": bf16,
           "int32": i32, "int8": i8, "float8_e4m3fn": fp8, "e4m3": fp8}


def lookup(name: str) -> DType | None:
    return BY_NAME.get(name) or BY_IR.get(name) or ALIASES.get(name)


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even at bf16, keeping NaN a NaN."""
    import numpy as np
    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), np.float32(np.nan), out)


def _round_fp8_e4m3(x: np.ndarray) -> np.ndarray:
    """Round to nearest even on the e4m3fn grid (max 448, no infinities: saturate)."""
    import numpy as np
    f = np.asarray(x, dtype=np.float32)
    mag = np.minimum(np.abs(f), 448.0)
    exp = np.floor(np.log2(np.maximum(mag, 2.0 ** -6)))
    step = 2.0 ** (exp - 3)
    q = np.round(mag / step) * step
    return np.where(np.isnan(f), np.nan, np.sign(f) * q).astype(np.float32)


def _round_int(bits: int):
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def rnd(x: np.ndarray) -> np.ndarray:
        import numpy as np
        v = np.asarray(x)
        if v.dtype.kind == "f":
            # in float64: a float32 bound (2^31 - 1 rounds to 2^31) would wrap on the cast
            v = np.trunc(np.nan_to_num(v.astype(np.float64)))
        return np.clip(v, lo, hi).astype(np.int64).astype(np.int32 if bits > 8 else np.int8)
    return rnd


def _round_fp16(x: np.ndarray) -> np.ndarray:
    import numpy as np
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def _round_fp32(x: np.ndarray) -> np.ndarray:
    import numpy as np
    return np.asarray(x, np.float32)


def _round_bool(x: np.ndarray) -> np.ndarray:
    import numpy as np
    return np.asarray(x).astype(bool)


_ROUNDERS = {
    "bf16": _round_bf16,
    "fp16": _round_fp16,
    "fp32": _round_fp32,
    "fp8": _round_fp8_e4m3,
    "i32": _round_int(32),
    "i8": _round_int(8),
    "bool": _round_bool,
}
