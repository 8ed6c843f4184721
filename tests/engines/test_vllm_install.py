"""The plugin's install in vLLM's own classes (the engine venv, no engine started): which
methods it replaces per switch, undo, the entry point vLLM loads. KTILE_ENGINE_TESTS=full runs
it (the default tier's A/B checks that vLLM loaded the plugin: `plugin_loaded`)."""
import json

import pytest

pytestmark = pytest.mark.engine_full

PROBE = r"""
import json, os
from importlib.metadata import entry_points
from ktile.integrations import vllm as kv
from vllm.model_executor.layers.layernorm import RMSNorm
from vllm.model_executor.layers.linear import UnquantizedLinearMethod
from vllm.model_executor.layers.activation import SiluAndMul

def state():
    return {"rms": RMSNorm.forward_native.__module__,
            "linear": UnquantizedLinearMethod.apply.__module__,
            "silu": SiluAndMul.__dict__["forward_native"].__func__.__module__}

out = {"entry": [e.value for e in entry_points(group="vllm.general_plugins") if e.name == "ktile"],
       "stock": state()}
os.environ["KTILE_VLLM_RMS_NORM"] = "0"              # the fused route still needs RMSNorm's hook
os.environ["KTILE_VLLM_LINEAR"] = "0"
installed = kv.install()
out["hooks"] = len(installed.originals)
out["patched"] = state()
kv.uninstall()
out["undone"] = state()
os.environ["KTILE_VLLM"] = "0"
out["off"] = kv.install() is None and state() == out["stock"]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(run_engine):
    proc = run_engine("-c", PROBE)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1])


def test_vllm_finds_the_entry_point(probe):
    assert probe["entry"] == ["ktile.integrations.vllm:register"]


def test_switches_choose_the_hooks_and_undo_restores_vllm(probe):
    hooked = "ktile.integrations.vllm_hooks"
    assert set(probe["stock"].values()) != {hooked}
    # RMSNorm stays hooked for fused_add_rms_norm; the linear method is left alone
    assert probe["patched"] == {**probe["stock"], "rms": hooked, "silu": hooked}
    # RMSNorm, SiluAndMul, RotaryEmbedding, KV, the fused MoE's load and apply, the two AWQ
    # methods' load and apply
    assert probe["hooks"] == 1 + 2 + 5 + 1 + 2 + 4
    assert probe["undone"] == probe["stock"]
    assert probe["off"]
