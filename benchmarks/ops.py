"""Time the op library on a GPU against torch eager, torch.compile and Triton kernels written
for the comparison; a thin script over `ktile bench` (ktile/bench/, docs/performance.md).

    python benchmarks/ops.py --quick --out /tmp/ops            # every op, the quick shapes
    python benchmarks/ops.py --out DIR --only rms_norm,softmax  # the full sweep of two ops
    python benchmarks/ops.py --plot-from DIR                    # PNGs + summary.md, no GPU

Without --only it runs every op (the scoreboard). Exit codes as `ktile bench`: 0 ok, 1 an
alternative's output differed from ktile's (or ktile failed at a shape), 2 unusable input.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ktile.bench import cli  # noqa: E402


def main(argv: list[str]) -> int:
    named = any(not a.startswith("-") for a in argv) or any(a.startswith("--only") for a in argv)
    if "--plot-from" in argv or "--list" in argv or named:
        return cli.main(argv, prog="benchmarks/ops.py")
    return cli.main(["--all", *argv], prog="benchmarks/ops.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
