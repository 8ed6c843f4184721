"""cocheck's wait check on planted assembly: every tests/data/cocheck/*.<arch>.s is assembled
(llvm-mc-22 -g, ld.lld-22) and checked; the findings must be exactly the lines marked
`// expect <kind>[: <wait>]`, with that wait as the fix. Unmarked files must be clean.

Also: compiled kernels pass clean, and removing any one of LLVM's own waits is caught.
"""
import re
import subprocess
from pathlib import Path

import pytest

from ktile.runtime.cocheck import Options, check_paths
from ktile.runtime.cocheck.llvm import find_tool

DATA = Path(__file__).resolve().parents[1] / "data" / "cocheck"
TOOLS = {name: find_tool(name) for name in
         ("llvm-mc", "ld.lld", "clang++", "llvm-readelf", "llvm-objdump")}
MISSING = [name for name, path in TOOLS.items() if path is None]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 "
                                 f"(missing {', '.join(MISSING)}; apt-get install clang-22 "
                                 f"lld-22 llvm-22)")]

EXPECT = re.compile(r"//\s*expect\s+([\w-]+)(?::\s*(.+?))?\s*$")
CASES = sorted(DATA.glob("*.s"))


def assemble(source: Path, arch: str, out_dir: Path) -> Path:
    obj, code = out_dir / f"{source.stem}.o", out_dir / f"{source.stem}.hsaco"
    subprocess.run([str(TOOLS["llvm-mc"]), "-triple", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
                    "-filetype=obj", "-g", "-I", str(DATA), str(source), "-o", str(obj)],
                   check=True)
    subprocess.run([str(TOOLS["ld.lld"]), "-shared", str(obj), "-o", str(code)], check=True)
    return code


def expected(source: Path) -> set[tuple[str, int, str | None]]:
    marks = set()
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        found = EXPECT.search(line)
        if found:
            marks.add((found.group(1), number, found.group(2)))
    return marks


def reported(code: Path) -> set[tuple[str, int, str | None]]:
    report = check_paths([code])
    [result] = report.objects
    assert result.error is None, result.error
    found = set()
    for function in result.functions:
        for finding in function.findings:
            line = int(finding.source.rpartition(":")[2])
            wait = _wait_of(finding)
            found.add((finding.kind, line, wait))
    return found


def _wait_of(finding) -> str | None:
    """The fix's wait as the marker spells it: the wait, or `s_barrier` when only a barrier
    is missing."""
    if finding.kind == "legacy-wait":
        return None
    return finding.details["wait"][0] if finding.details["wait"] else "s_barrier"


@pytest.mark.parametrize("source", CASES, ids=[c.name for c in CASES])
def test_planted_case(source, tmp_path):
    arch = source.suffixes[-2].lstrip(".")
    assert reported(assemble(source, arch, tmp_path)) == expected(source)


def test_every_arch_has_a_hazard_and_a_clean_case():
    by_arch: dict[str, set[bool]] = {}
    for source in CASES:
        by_arch.setdefault(source.suffixes[-2].lstrip("."), set()).add(bool(expected(source)))
    assert by_arch == {arch: {True, False} for arch in ("gfx1100", "gfx1201", "gfx942", "gfx950")}


def test_the_finding_names_the_reader_the_load_the_counter_and_the_fix(tmp_path):
    code = assemble(DATA / "vmcnt_counts_stores.gfx942.s", "gfx942", tmp_path)
    [function] = check_paths([code]).objects[0].functions
    [finding] = function.findings
    assert finding.kernel == "planted" and finding.failing
    assert finding.message.startswith("`v_add_f32_e32 v3, v3, v5` at 0x")
    assert "reads v5 while the load that writes it, `global_load_dword v5, v0, s[2:3] " \
           "offset:16` at 0x" in finding.message
    assert "vmcnt_counts_stores.gfx942.s:12)" in finding.message
    assert "it counts on vmcnt, and no wait on the paths since covers it" in finding.message
    assert finding.fix == ("insert `s_waitcnt vmcnt(0)` before this instruction (it is the "
                           "last vmcnt operation issued)")
    assert finding.details["load"]["instruction"] == "global_load_dword v5, v0, s[2:3] offset:16"
    assert finding.details["counters"] == ["vmcnt"]


def test_a_partial_count_is_the_fix_when_later_loads_may_stay_in_flight(tmp_path):
    source = tmp_path / "partial.gfx942.s"
    body = (DATA / "vmcnt_counts_stores.gfx942.s").read_text()
    source.write_text(body.replace("\ts_waitcnt vmcnt(1)\n\tv_add_f32_e32 v3, v3, v4",
                                   "\tv_add_f32_e32 v3, v3, v4"))
    [function] = check_paths([assemble(source, "gfx942", tmp_path)]).objects[0].functions
    fixes = sorted(f.details["wait"][0] for f in function.findings)
    assert fixes == ["s_waitcnt vmcnt(0)", "s_waitcnt vmcnt(1)"]


# Three shapes of kernel LLVM places fine-grained waits in: a double-buffered LDS loop with
# lgkmcnt(N) / vmcnt(N) and a load carried around the back edge, scalar loads feeding a loop,
# and a returning atomic next to a load. With clang-22 (Debian 1:22.1.8) every wait LLVM places
# in them is needed by a read; LLVM also places waits the check rightly finds unneeded (two
# in-order LDS loads writing one register), which is why these kernels avoid that shape.
HIP = """
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
typedef float float4_ __attribute__((ext_vector_type(4)));
__global__ void __attribute__((amdgpu_flat_work_group_size(1, 256)))
staged(const float4_* a, const float4_* b, float* o, int k_tiles) {
  __shared__ float4_ As[2][256];
  __shared__ float4_ Bs[2][256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  float acc[16] = {};
  float4_ ra = a[t], rb = b[t];
  for (int k = 0; k < k_tiles; ++k) {
    int s = k & 1;
    As[s][t] = ra; Bs[s][t] = rb;
    __builtin_amdgcn_s_barrier();
    if (k + 1 < k_tiles) { ra = a[(k + 1) * 256 + t]; rb = b[(k + 1) * 256 + t]; }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float4_ x = As[s][(t + i * 17) & 255], y = Bs[s][(t * 3 + i) & 255];
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i * 4 + j] += x[j] * y[(j + i) & 3];
    }
    __builtin_amdgcn_s_barrier();
  }
  for (int i = 0; i < 16; ++i) o[t * 16 + i] = acc[i];
}
__global__ void strided(const int* p, float* o, int n) {
  int s0 = p[0], s1 = p[1], s2 = p[2];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  float v = 0;
  for (int i = s0; i < n; i += s1) v += o[i * s2 + t];
  o[t] = v;
}
__global__ void tickets(int* c, float* o) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  int old = __atomic_fetch_add(c + (t & 7), 1, __ATOMIC_RELAXED);
  o[t] = old * 2.0f + o[t + 1024];
}
"""
WAIT_LINE = re.compile(r"^\s+s_wait(cnt|_loadcnt|_dscnt|_kmcnt|_loadcnt_dscnt)\s")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_each_of_llvms_waits_removed_is_caught(arch, tmp_path):
    """The compiled kernels are clean, and with any one of LLVM's waits gone the check reports
    a hazard."""
    source = tmp_path / "staged.hip"
    source.write_text(HIP)
    asm = tmp_path / "staged.s"
    subprocess.run([str(TOOLS["clang++"]), "-x", "hip", f"--offload-arch={arch}",
                    "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3", "-S", str(source),
                    "-o", str(asm)], check=True)
    lines = asm.read_text().splitlines()
    assert not _hazards(tmp_path, "clean", lines, arch)
    waits = [n for n, line in enumerate(lines) if WAIT_LINE.match(line)]
    assert len(waits) >= 10
    for n in waits:
        mutated = lines[:n] + ["\ts_nop 0"] + lines[n + 1:]
        assert _hazards(tmp_path, f"without{n}", mutated, arch), lines[n]


def _hazards(tmp_path: Path, name: str, lines: list[str], arch: str) -> list:
    source = tmp_path / f"{name}.s"
    source.write_text("\n".join(lines) + "\n")
    obj = tmp_path / f"{name}.o"
    subprocess.run([str(TOOLS["llvm-mc"]), "-triple", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
                    "-filetype=obj", str(source), "-o", str(obj)], check=True)
    report = check_paths([obj], Options())
    return [f for fn in report.objects[0].functions for f in fn.findings
            if f.kind.endswith("hazard")]
