"""`ktile SUBCOMMAND ...`: one entry point for ktile's command-line tools.

    ktile cocheck k.hsaco [--json] [--max-vgprs N] [--min-occupancy N] [--mcpu gfxNNNN]
    python -m ktile.tools.cli cocheck k.hsaco

Each subcommand is a module with `main(argv, prog)`, imported only when it runs, so
`ktile --help` stays fast and one tool's dependencies never load for another.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# name -> (module with main(argv, prog), one-line summary); add a line per subcommand
SUBCOMMANDS = {
    "cocheck": ("ktile.runtime.cocheck.cli",
                "check AMDGPU code objects: spills, scratch, registers, occupancy, waits"),
    "tune": ("ktile.autotune.cli_tune", "tune one op on one target; write its routing table"),
    "routes": ("ktile.autotune.cli_routes", "show the routing tables, built-in and shipped"),
    "check": ("ktile.tools.check",
              "check an op or a kernel for a target: trace, gates, build, reference"),
    "bench": ("ktile.bench.cli", "time ops on a CUDA GPU against torch, torch.compile, Triton"),
}


def usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: ktile SUBCOMMAND [ARGS...]", "", "subcommands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in SUBCOMMANDS.items()]
    lines += ["", "`ktile SUBCOMMAND --help` describes one."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"ktile: unknown subcommand {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return module.main(rest, prog=f"ktile {name}")


if __name__ == "__main__":
    sys.exit(main())
