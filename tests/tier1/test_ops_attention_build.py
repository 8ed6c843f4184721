"""Tier 1 builds of attention prefill on sm_90a (issue #12): `attention_ws` (the
warp-specialised pipeline of ktile/ops/attention/prefill_ws.py) at each route's constants (D 64
and 128, causal and not; bf16, and fp16 at one), compiles with no spill and no wgmma
serialized by ptxas (C7514 / C7517) at the 384-thread block's launch registers, each role with
its register limit, K and V tiles copied by TMA into the stages, S = Q·Kᵀ and O += P·V as
wgmma with A from registers (V read N-major: the transposed-B form)."""
import re
import subprocess

import pytest

import build_gates
from ktile import config
from ktile.ops.attention import op, prefill_ws

pytestmark = pytest.mark.tier1

# every route of the table in bf16 (its constants, not the kernel's defaults), one in fp16
WS_ROUTES = [r for r in op.TABLE.routes if r.kernel == "attention_ws"]   # sm_90a's
CASES = [(r.constants, "bf16") for r in WS_ROUTES] + [(WS_ROUTES[-1].constants, "fp16")]
# the pinnable OVERLAP form (two MMAs in flight through the softmax) where registers are
# tightest: D 128 (S 16×64 and O 16×128 fp32, P carried), with the exact exp2 and the scale
# apart as it was built and timed (with EXP2_FAST and FUSED_SCALE ptxas serialises its wgmmas,
# C7514: a pinnable combination, not routed)
CASES += [({**r.constants, "OVERLAP": True, "EXP2_FAST": False, "FUSED_SCALE": False}, "bf16")
          for r in WS_ROUTES if r.constants["D"] == 128 and not r.constants["CAUSAL"]]
# the pinnable PINGPONG 2 form (named barriers around each warpgroup's P·V and S wgmmas) at
# D 128, causal, with EXP2_FAST (the softmax's exp2 one ex2.approx.ftz) and FUSED_SCALE
CASES += [({**r.constants, "PINGPONG": 2, "EXP2_FAST": True, "FUSED_SCALE": True}, "bf16")
          for r in WS_ROUTES if r.constants["D"] == 128 and r.constants["CAUSAL"]]
# three consumer warpgroups (BM 192, 16 warps, 160 registers each): D 64 only (D 128 spills
# 472 bytes and serialises its wgmmas, C7512), with PINGPONG; under KTILE_OPS_FULL_BUILD=1
if config.OPS_FULL_BUILD.get() == "1":
    CASES += [({**r.constants, "BM": 192, "WARPS": 16, "PINGPONG": 2}, "bf16")
              for r in WS_ROUTES if r.constants["D"] == 64 and r.constants["CAUSAL"]]


def case_id(case) -> str:
    constants, dtype = case
    return (f"D{constants['D']}-{'causal' if constants['CAUSAL'] else 'full'}-{dtype}"
            + ("-overlap" if constants.get("OVERLAP") else "")
            + ("-pingpong" if constants.get("PINGPONG") else "")
            + ("-exp2fast" if constants.get("EXP2_FAST") else "")
            + (f"-bm{constants['BM']}" if constants["BM"] != 128 else ""))


@pytest.fixture(scope="module", params=CASES, ids=case_id)
def attention_build(tmp_path_factory, request):
    hopper = build_gates.hopper()
    constants, dtype = request.param
    d = constants["D"]
    folder = tmp_path_factory.mktemp(f"attention_d{d}")
    kernel = prefill_ws.attention_ws(dtype)
    cu = folder / "k.cu"
    cu.write_text(kernel.trace("sm_90a", **constants).source())
    result = subprocess.run([hopper.NVCC, *hopper.FLAGS, "-keep", "-keep-dir", str(folder),
                             str(cu), "-o", str(folder / "k.cubin")],
                            capture_output=True, text=True, timeout=300, cwd=folder)
    log = result.stdout + result.stderr
    build = hopper.Build(result.returncode, log, hopper.parse_ptxas(log))
    ptx = next(folder.glob("*.ptx"), None)
    assert build.returncode == 0 and ptx is not None, log[-3000:]
    return (kernel.name, ptx.read_text(), build, d, {"bf16": "bf16", "fp16": "f16"}[dtype],
            constants)


def test_attention_ws_builds_with_no_spill_and_no_serialized_wgmma(attention_build):
    name, _, build, _, _, _ = attention_build
    build_gates.assert_sm90a_clean(build, name)
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]
    threads = (1 + attention_build[5]["BM"] // 64) * 128
    assert build.functions[name].registers == 65536 // threads // 8 * 8   # the roles' pool


def test_attention_ws_stages_and_wgmmas(attention_build):
    _, ptx, _, d, ptx_type, constants = attention_build
    consumers = str(prefill_ws.consumer_registers(constants["WARPS"]))   # 240; 160 at 16 warps
    assert re.findall(r"setmaxnreg\.(dec|inc)\.sync\.aligned\.u32 (\d+);", ptx) == \
        [("dec", "24"), ("inc", consumers)]
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    # S = Q·Kᵀ: D / 16 wgmma m64n64k16 (BK = 64 keys); O += P·V: BK / 16 wgmma m64nDk16; both
    # with A from registers (a {...} list, no descriptor): Q and P never go through shared
    mma = rf"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.{ptx_type}\.{ptx_type}"
    wgmmas = re.findall(mma + r"\s*\{[^}]*\},\s*(\{?)", ptx)
    assert all(a == "{" for _, a in wgmmas), wgmmas
    widths = sorted(int(n) for n, _ in wgmmas)
    assert widths == sorted([64] * (d // 16) + [d] * (64 // 16)), widths
    # S reads K K-major (imm-trans-b 0); O += P·V reads V [keys, D] N-major (1): no Vᵀ copy
    trans = re.findall(mma + r"\s*\{[^}]*\},\s*\{[^}]*\},\s*%rd\d+,\s*p,\s*1,\s*1,\s*(\d);",
                       ptx)
    want = [("64", "0")] * (d // 16) + [(str(d), "1")] * (64 // 16)
    assert sorted(trans) == sorted(want), trans


def test_pingpong_takes_turns_on_named_barriers_1_and_2(attention_build):
    """PINGPONG: each consumer warpgroup syncs on its own barrier (1 + warpgroup, 256 threads)
    before its turn's wgmmas and arrives on the next one's after them. The routes have no
    named barrier."""
    _, ptx, _, _, _, constants = attention_build
    pingpong, groups = constants.get("PINGPONG"), constants["BM"] // 64
    syncs = set(re.findall(r"bar\.sync (\d+), (\d+);", ptx))
    arrives = set(re.findall(r"bar\.arrive (\d+), (\d+);", ptx))
    if not pingpong:
        assert syncs == set() and arrives == set(), (syncs, arrives)
        return
    # warpgroup g syncs on 1 + g and passes the turn to g + 1 (the last to 0, which also
    # gives the first turn): every id is synced and arrived on, 256 threads each
    ids = {(str(1 + g), "256") for g in range(groups)}
    assert syncs == ids and arrives == ids, (syncs, arrives)


def test_exp2_fast_is_one_ftz_approximation_a_value(attention_build):
    """EXP2_FAST: every exp2 of the softmax is ex2.approx.ftz.f32 (one MUFU.EX2, no subnormal
    fix-up); the routes keep exp2f (ex2.approx.f32 with its range fix-up)."""
    _, ptx, _, _, _, constants = attention_build
    fast = len(re.findall(r"ex2\.approx\.ftz\.f32", ptx))
    exact = len(re.findall(r"ex2\.approx\.f32", ptx))
    assert (fast > 0 and exact == 0) if constants.get("EXP2_FAST") else \
        (fast == 0 and exact > 0), (fast, exact)
