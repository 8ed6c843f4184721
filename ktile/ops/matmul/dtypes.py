"""The op's dtype names: the input dtype, or input-output for another output dtype
("bf16-fp32": bf16 a and b, fp32 out). A kernel factory takes one of these names."""
from __future__ import annotations

INPUTS = ("bf16", "fp16")
OUTPUTS = ("bf16", "fp16", "fp32")
# first the same-dtype forms (CI builds and emulates the first), then the other outputs
NAMES = tuple(INPUTS) + tuple(f"{i}-{o}" for i in INPUTS for o in OUTPUTS if o != i)


def pair(name: str) -> tuple[str, str]:
    """(input dtype, output dtype) of an op dtype name."""
    first, _, second = name.partition("-")
    return first, second or first


def name_of(inputs: str, output: str) -> str:
    return inputs if output == inputs else f"{inputs}-{output}"
