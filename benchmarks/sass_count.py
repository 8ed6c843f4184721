"""Static sm_90a SASS instruction counts of ops' kernels, by class (issue #13).

Builds the kernel an op's routing table picks at a shape (or a named route's kernel at given
constants) for sm_90a with nvcc, disassembles its cubin with cuobjdump (or nvdisasm) and counts
the kernel's instructions by class: memory, integer / address arithmetic, float, conversions,
control, shuffles, other. Static counts (each instruction once, loops not unrolled by the
count), no GPU needed; `ncu` on a GPU gives the dynamic counts. Two counts per kernel: `all`,
the cubin as built, and `hot`, the same source built with KT_MEASURE_UNIT_PATH_ONLY: every flat
tile access on its unit path, the element-by-element fallback for ragged or misaligned tiles
compiled out - the code a full, aligned tile runs (rows still bounds-checked).

    python benchmarks/sass_count.py                      # the default set of cases
    python benchmarks/sass_count.py rms_norm:16384x4096 add:4096x4096:fp32 --json out.json
    python benchmarks/sass_count.py silu_and_mul:64x8192 --set ACT=silu --listing

A case is OP:ROWSxCOLS[:DTYPE] (DTYPE bf16 unless given). nvdisasm / cuobjdump are looked up
on PATH, next to nvcc, under /usr/local/cuda/bin, then in the pip wheels' folders
/tmp/cuobj*/nvidia/cu*/bin (`pip install --target /tmp/cuobj2 nvidia-cuda-nvdisasm`).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ktile.errors import InputError  # noqa: E402

TARGET = "sm_90a"
DEFAULT_CASES = ["rms_norm:1x4096", "rms_norm:16384x4096", "fused_add_rms_norm:16384x4096",
                 "silu_and_mul:16384x8192", "softmax:4096x4096", "add:4096x4096"]

# Opcode (before the first '.') -> class. Anything not listed counts as "other".
CLASSES = {
    "memory": {"LDG", "STG", "LD", "ST", "LDS", "STS", "LDC", "ULDC", "ATOM", "ATOMG", "RED",
               "LDSM", "LDGSTS", "LDGDEPBAR", "UBLKCP", "UTMALDG", "UTMASTG", "S2R", "S2UR",
               "CS2R"},
    "int": {"IMAD", "IADD3", "IADD", "LEA", "LEA.HI", "SHF", "SHL", "SHR", "LOP3", "IMNMX",
            "ISETP", "IABS", "POPC", "FLO", "BREV", "SEL", "MOV", "UMOV", "UIADD3", "UIMAD",
            "ULEA", "USHF", "ULOP3", "USEL", "UISETP", "PLOP3", "P2R", "R2P", "VIADD", "VIMNMX",
            "IMUL", "UPLOP3", "IMNMX3", "UFLO", "UPOPC", "VOTEU"},
    "float": {"FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSEL", "MUFU", "FCHK", "HADD2", "HMUL2",
              "HFMA2", "HMNMX2", "FSWZADD", "DADD", "DMUL", "DFMA", "FMNMX3", "FADD2", "FMUL2",
              "FFMA2", "HSETP2"},
    "convert": {"F2F", "F2FP", "I2F", "F2I", "PRMT", "I2FP", "F2IP", "FRND"},
    "control": {"BRA", "BRX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BAR", "WARPSYNC", "NOP",
                "BPT", "YIELD", "JMP", "KILL", "BMOV", "DEPBAR", "MEMBAR", "ELECT", "ERRBAR",
                "CCTL", "WARPGROUP", "ACQBULK", "FENCE", "SYNCS"},
    "shuffle": {"SHFL", "VOTE", "REDUX", "MATCH"},
}
OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_.]+)?")


def find_tool() -> list[str]:
    """The command that prints a cubin's SASS: nvdisasm, else cuobjdump -sass (which itself
    needs nvdisasm on PATH for sm_90a cubins)."""
    nvcc = shutil.which("nvcc")
    folders = [os.path.dirname(os.path.realpath(nvcc))] if nvcc else []
    folders += ["/usr/local/cuda/bin", *sorted(glob.glob("/tmp/cuobj*/nvidia/cu*/bin"))]
    for name, args in (("nvdisasm", []), ("cuobjdump", ["-sass"])):
        found = shutil.which(name) or next((os.path.join(f, name) for f in folders
                                            if os.access(os.path.join(f, name), os.X_OK)), None)
        if found:
            return [found, *args]
    raise InputError("neither cuobjdump nor nvdisasm was found (PATH, next to nvcc, "
                     "/usr/local/cuda/bin, /tmp/cuobj*/nvidia/cu*/bin)",
                     hint="pip install --target /tmp/cuobj nvidia-cuda-cuobjdump, or put "
                          "CUDA's bin folder on PATH")


def opcode_class(opcode: str) -> str:
    for name, opcodes in CLASSES.items():
        if opcode in opcodes:
            return name
    return "other"


def count_sass(listing: str) -> dict:
    """Instruction counts by class and by opcode of a kernel's SASS listing. The runtime's
    out-of-line slow paths (`$__internal_*`: IEEE division, sqrt and reciprocal of denormal
    or special operands) are counted apart, as `subroutines`: no full tile runs them."""
    opcodes, subroutines, inside_subroutine = Counter(), 0, False
    for line in listing.splitlines():
        if line.startswith("$__internal") and line.rstrip().endswith(":"):
            inside_subroutine = True
        found = OPCODE.search(line)
        if not found or found.group(1) == "NOP":   # NOP: alignment padding, not executed
            continue
        if inside_subroutine:
            subroutines += 1
        else:
            opcodes[found.group(1)] += 1
    classes = Counter()
    for opcode, n in opcodes.items():
        classes[opcode_class(opcode)] += n
    return {"total": sum(opcodes.values()), "classes": dict(sorted(classes.items())),
            "opcodes": dict(opcodes.most_common()), "subroutines": subroutines}


def parse_case(text: str) -> tuple[str, int, int, str]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or "x" not in parts[1].lower():
        raise InputError(f"case {text!r} is not OP:ROWSxCOLS[:DTYPE]",
                         hint="e.g. rms_norm:16384x4096 or add:4096x4096:fp32")
    rows, cols = parts[1].lower().split("x")
    return parts[0], int(rows), int(cols), parts[2] if len(parts) == 3 else "bf16"


def build_case(op_name: str, rows: int, cols: int, dtype: str, overrides: dict):
    """The sm_90a build of the kernel `op_name`'s table routes (rows, cols) to, and its name."""
    from ktile.tools.check_plan import constants_text, find_op
    op = find_op(op_name)
    route = op.table.choose(rows, cols, TARGET)
    constants = {**route.constants, **{k: v for k, v in overrides.items()
                                       if k in route.constants}}
    build = op.kernel(route, dtype).build(target=TARGET, **constants)
    return build, f"{op.name}/{route.kernel}/{dtype}/{constants_text(constants)}"


def rebuild(build, include: str | None, defines: tuple[str, ...] = ()) -> tuple[str, int]:
    """The build's generated source compiled again by its own command, with `defines` and,
    where given, the headers of `include` (e.g. an older commit's ktile/include, to count
    before / after a header change); the new cubin's path and its registers (ptxas -v)."""
    command = build.entry.command_path.read_text().split()
    out = os.path.join(tempfile.mkdtemp(prefix="ktile_sass_"), "kernel.cubin")
    command[command.index("-o") + 1] = out
    if include:
        command[command.index("-I") + 1] = include
    done = subprocess.run([command[0], *(f"-D{d}" for d in defines), *command[1:]],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the rebuild failed: {done.stdout}{done.stderr}")
    used = re.search(r"Used (\d+) registers", done.stdout + done.stderr)
    return out, int(used.group(1)) if used else -1


def disassemble(tool: list[str], cubin: str) -> str:
    done = subprocess.run([*tool, cubin], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(tool)} {cubin} failed: {done.stderr.strip()}")
    return done.stdout


def parse_overrides(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--set {item!r} is not KEY=VALUE", hint="e.g. --set ACT=silu")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a route constant (only constants the route has)")
    parser.add_argument("--json", help="write the counts to this file")
    parser.add_argument("--include", help="compile against this ktile/include folder instead "
                        "(e.g. `git archive HEAD~1 ktile/include | tar -x -C /tmp/old`, then "
                        "/tmp/old/ktile/include): the same kernels, other headers")
    parser.add_argument("--listing", action="store_true",
                        help="print each kernel's SASS (its unit-path build)")
    args = parser.parse_args(argv)
    tool, overrides = find_tool(), parse_overrides(args.set)
    results = []
    print(f"{'case':<30} {'kernel':<56} {'regs':>4} {'all':>5} {'hot':>5} {'sub':>4}  hot by class")
    for case in args.cases:
        op_name, rows, cols, dtype = parse_case(case)
        try:
            build, name = build_case(op_name, rows, cols, dtype, overrides)
            cubin, registers = rebuild(build, args.include)
            listing = disassemble(tool, cubin)
            hot_listing = disassemble(tool, rebuild(build, args.include,
                                                    ("KT_MEASURE_UNIT_PATH_ONLY",))[0])
        except Exception as error:    # one case's failure (a route being edited) ends no run
            print(f"{case:<30} failed: {type(error).__name__}: {str(error).splitlines()[0]}")
            results.append({"case": case, "error": str(error)})
            continue
        counts, hot = count_sass(listing), count_sass(hot_listing)
        results.append({"case": case, "kernel": name, "registers": registers,
                        "all": counts, "hot": hot})
        classes = " ".join(f"{k}={v}" for k, v in hot["classes"].items())
        print(f"{case:<30} {name:<56} {registers:>4} {counts['total']:>5} "
              f"{hot['total']:>5} {hot['subroutines']:>4}  {classes}")
        if args.listing:
            print(hot_listing)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": TARGET, "tool": os.path.basename(tool[0]), "results": results},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
