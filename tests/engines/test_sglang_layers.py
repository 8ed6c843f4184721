"""SGLang 0.5.23's layers patched by ktile.integrations.sglang vs stock (SGLang's forward_native),
on the CPU, in the engine venv .venv-engines (scripts/setup-engines): every hooked layer within
ktile's op tolerance, through SGLang's dispatch and the in-place CUDA forms; counters; the
engine contract; switches; shadow mode; the plugin entry point.

Each test runs `python -m ktile.integrations.sglang_check --json` (or a few lines) in that venv,
outside the checkout (whose ktile.egg-info, the main venv's, would hide the engine venv's
entry points): about 10 s of CPU a run. The default engine tier runs the first (every layer
against stock, shadow mode on); KTILE_ENGINE_TESTS=full the rest."""
import json

import pytest

ROUTES = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "gelu_and_mul", "rotary_embedding")


@pytest.fixture(scope="module")
def sglang(run_engine):
    return run_engine


def _run(run, *args: str, env: dict | None = None):
    return run(*args, env=env, timeout=600)


def _check(run, *flags: str, env: dict | None = None) -> dict:
    done = _run(run, "-m", "ktile.integrations.sglang_check", "--json", *flags, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _calls(result: dict, route: str) -> int:
    return result["counters"].get(f"sglang.{route}", {}).get("eager", 0)


def test_every_layer_patched_matches_stock_with_shadow_mode(sglang):
    result = _check(sglang, env={"KTILE_SGLANG_SHADOW": "1"})
    assert result["installed"] and result["warnings"] == []
    assert result["versions"]["sglang"] == "0.5.23"
    bad = {name: c for name, c in result["cases"].items() if not c["ok"]}
    assert bad == {}
    # every route, both sizes (the interpreter and the reference), the CUDA in-place forms
    seen = {(c["route"], name.rsplit("@", 1)[1]) for name, c in result["cases"].items()}
    assert seen == {(r, size) for r in ROUTES for size in ("small", "large")}
    assert {"fused_add_rms_norm.forward_cuda@small", "rotary_embedding.forward_cuda@small"} \
        <= set(result["cases"])
    for route in ROUTES:
        counts = result["counters"][f"sglang.{route}"]
        assert counts["eager"] > counts["reference"] > 0, (route, counts)   # both paths ran
        assert counts["fallback"] == 0 and counts["shadow_mismatch"] == 0, (route, counts)
    # the comparison is not vacuous: outputs are of order one, diffs at most a rounding
    assert all(0.5 < c["scale"] and c["max_diff"] < 0.05 for c in result["cases"].values())


@pytest.mark.engine_full
def test_a_changed_signature_leaves_sglang_stock_with_one_warning(sglang):
    result = _check(sglang, "--break-contract")
    assert not result["installed"]
    assert len(result["warnings"]) == 1
    warning = result["warnings"][0]
    assert "engine stays stock" in warning and "SiluAndMul.forward_cuda" in warning
    assert result["counters"] == {}
    assert all(c["max_diff"] == 0.0 for c in result["cases"].values())


@pytest.mark.engine_full
def test_switches(sglang):
    off = _check(sglang, env={"KTILE_SGLANG": "0"})
    assert not off["installed"] and off["warnings"] == [] and off["counters"] == {}
    assert all(c["max_diff"] == 0.0 for c in off["cases"].values())

    some = _check(sglang, env={"KTILE_SGLANG_SILU_AND_MUL": "0",
                                      "KTILE_SGLANG_FUSED_ADD_RMS_NORM": "0"})
    assert some["installed"]
    assert "sglang.silu_and_mul" not in some["counters"]          # not hooked at all
    # RMSNorm's hook serves both routes: the fused calls fall back to SGLang's method
    fused = some["counters"]["sglang.fused_add_rms_norm"]
    assert fused["eager"] == 0 and fused["fallback"] > 0
    for route in ("rms_norm", "gelu_and_mul", "rotary_embedding"):
        assert _calls(some, route) > 0, route
    for name, case in some["cases"].items():
        if case["route"] in ("silu_and_mul", "fused_add_rms_norm"):
            assert case["max_diff"] == 0.0, name                   # SGLang's own result


@pytest.mark.engine_full
def test_sglang_loads_the_plugin_entry_point(sglang):
    script = ("import os; os.environ['SGLANG_USE_CPU_ENGINE'] = '1'\n"
              "from sglang.srt.plugins import load_plugins\n"
              "load_plugins()\n"
              "from ktile.integrations import sglang\n"
              "from sglang.srt.layers.layernorm import RMSNorm\n"
              "print(sglang._INSTALLED is not None, RMSNorm.forward_native.__module__)\n")
    done = _run(sglang, "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-2:] == ["True", "ktile.integrations.sglang_hooks"]


@pytest.mark.engine_full
def test_shadow_mode_counts_a_wrong_kernel(sglang):
    """A routed kernel that is off by 10% (ktile's rms_norm replaced by a wrong one): shadow
    mode counts the mismatch and warns; the call still returns the routed result."""
    script = ("import os, warnings, torch; os.environ['SGLANG_USE_CPU_ENGINE'] = '1'\n"
              "from sglang.srt.layers.layernorm import RMSNorm\n"
              "from ktile.integrations import sglang, sglang_ops\n"
              "right = sglang_ops._rms_ktile\n"
              "sglang_ops._rms_ktile = lambda x, w, eps: right(x, w, eps) * 1.1\n"
              "sglang.install()\n"
              "with warnings.catch_warnings(record=True) as caught, torch.no_grad():\n"
              "    warnings.simplefilter('always')\n"
              "    RMSNorm(128).to(torch.bfloat16)(torch.randn(4, 128).to(torch.bfloat16))\n"
              "c = sglang.counters()['sglang.rms_norm']\n"
              "print(c['eager'], c['shadow_mismatch'],\n"
              "      sum('shadow mode' in str(w.message) for w in caught))\n")
    done = _run(sglang, "-c", script, env={"KTILE_SGLANG_SHADOW": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-3:] == ["1", "1", "1"]


@pytest.mark.engine_full
def test_sglang_torch_compile_mode_fullgraph(sglang):
    """SGLang's torch.compile mode (layers on forward_native) over a fused RMSNorm, SiluAndMul
    and RotaryEmbedding, fullgraph=True: no graph break, each routed op counted per call (two
    calls of the compiled step), results within tolerance of the stock step."""
    result = _check(sglang, "--compile")
    assert result["installed"]
    assert all(c["ok"] for c in result["cases"].values()), result["cases"]
    for route in ("fused_add_rms_norm", "silu_and_mul", "rotary_embedding"):
        assert _calls(result, route) == 2, result["counters"]
