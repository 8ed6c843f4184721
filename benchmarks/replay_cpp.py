"""Replay the generated C++ of every example kernel for every target (STYLE habit 10).

    python benchmarks/replay_cpp.py --write DIR     # one file per (kernel, constants, target)
    python benchmarks/replay_cpp.py --compare DIR   # regenerate and diff against DIR

A refactor of the translation or of the headers' names proves itself by a compare that finds
no difference (or only include lines, with --ignore-includes). Exit status: 0 identical,
1 some file differs or is missing, 2 usage.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "examples"))  # the examples import their `common`


def generated_sources() -> dict[str, str]:
    """file name -> C++ source, for every example kernel (with each of its constant sets) and
    every target."""
    import examples_index
    from ktile import targets
    sources: dict[str, str] = {}
    for name in examples_index.EXAMPLE_NAMES:
        module = examples_index.load(name)
        for k, (kernel, constants) in enumerate(module.KERNELS):
            for target in targets.NAMES:
                key = f"{name}.{k}.{kernel.name}.{target}.cpp"
                source = kernel.trace(target, **constants).source()
                sources[key] = source.replace(str(ROOT), "<repo>")   # #line paths
    return sources


def _body(text: str, ignore_includes: bool) -> list[str]:
    lines = text.splitlines(keepends=True)
    if ignore_includes:
        lines = [line for line in lines if not line.startswith("#include")]
    return lines


def compare(directory: Path, ignore_includes: bool) -> int:
    differing = 0
    now = generated_sources()
    for key, source in sorted(now.items()):
        path = directory / key
        if not path.exists():
            print(f"missing in {directory}: {key}")
            differing += 1
            continue
        before = _body(path.read_text(), ignore_includes)
        diff = list(difflib.unified_diff(before, _body(source, ignore_includes), key, key))
        if diff:
            differing += 1
            sys.stdout.writelines(diff)
    print(f"{len(now)} translations compared, {differing} differ")
    return 1 if differing else 0


def write(directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    sources = generated_sources()
    for key, source in sources.items():
        (directory / key).write_text(source)
    print(f"{len(sources)} translations written to {directory}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, metavar="DIR")
    group.add_argument("--compare", type=Path, metavar="DIR")
    parser.add_argument("--ignore-includes", action="store_true")
    args = parser.parse_args()
    if args.write:
        return write(args.write)
    return compare(args.compare, args.ignore_includes)


if __name__ == "__main__":
    sys.exit(main())
