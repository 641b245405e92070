"""The launcher and supervisor against the real vLLM, on the production architecture.

A tiny randomly initialised HunYuanDenseV1ForCausalLM (output is noise) is served with the
a10 profile's flags minus the GPU-only one, through `hymt-chat serve-model` itself.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hymt_chat.settings import Settings
from tests.support.ports import free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
# Everything is the a10 profile but two flags. dtype: bf16 is slow on this CPU (no avx512_bf16).
# --gpu-memory-utilization: on the CPU build it is the fraction of the host's RAM to reserve
# (vLLM refuses to start when that much is not free), and these servers start while the demo
# server and the scaled-out stack hold theirs: a tenth of this machine is plenty for the tiny
# model, whose KV cache VLLM_CPU_KVCACHE_SPACE sets to 1 GiB.
A10_ON_CPU = "--gpu-memory-utilization 0.1 --dtype float32"


def _build_tiny(tmp: Path, *extra: str) -> Path:
    settings = Settings()
    out = tmp / ("tiny-hunyuan" + "".join(extra).replace("-", "_"))
    subprocess.run(
        [str(settings.vllm_python), str(ROOT / "tests" / "support" / "tiny_hunyuan.py"),
         str(out), str(settings.demo_model_dir), *extra],
        check=True, timeout=600, cwd=ROOT,
    )
    return out


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return _build_tiny(tmp_path_factory.mktemp("tiny"))


def _vllm_pids(port: int) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"vllm.entrypoints.openai.api_server.*--port {port}"],
                         capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _state(cache: Path, port: int) -> dict:
    path = cache / "run" / f"sidecar-{port}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _wait(predicate, timeout: float, what: str, launcher: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if launcher is not None and launcher.poll() is not None:
            raise AssertionError(f"the launcher exited ({launcher.returncode}) while waiting "
                                 f"for {what}")
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def _wait_ready(launcher: subprocess.Popen, cache: Path, port: int, timeout: float = 600) -> dict:
    """The sidecar's state once ready; fails at once, with its stderr, if the launcher exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = _state(cache, port)
        if state.get("state") == "ready":
            return state
        if launcher.poll() is not None:
            raise AssertionError(f"the launcher exited ({launcher.returncode}): "
                                 f"{launcher.stderr.read() if launcher.stderr else ''}")
        time.sleep(1)
    raise AssertionError("timed out waiting for the sidecar to be ready")


def _complete(state: dict) -> str:
    response = httpx.post(
        f"{state['base_url']}/chat/completions",
        headers={"Authorization": f"Bearer {state['api_key']}"},
        json={"model": state["model"], "max_tokens": 8,
              "messages": [{"role": "user", "content": "Translate the following segment into "
                            "French, without additional explanation.\n\nHello"}]},
        timeout=120,
    )
    response.raise_for_status()
    return response.json()["choices"][0]["message"]["content"]


def _serve(model: Path, port: int, cache: Path, **env: str) -> subprocess.Popen:
    full_env = {**os.environ, "HYMT_CACHE_DIR": str(cache), "HYMT_VLLM_ARGS": A10_ON_CPU,
                "VLLM_CPU_KVCACHE_SPACE": "1",
                "HYMT_VLLM_PYTHON": str(Settings().vllm_python), **env}
    full_env.pop("HYMT_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "hymt_chat.cli.main", "serve-model", "--profile", "a10",
         "--model", str(model), "--port", str(port)],
        env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )


@pytest.mark.vllm
def test_production_flags_serve_and_a_hung_server_is_restarted_and_cleaned_up(tiny_model,
                                                                              tmp_path):
    port, cache = free_port(), tmp_path / "cache"
    launcher = _serve(tiny_model, port, cache)
    try:
        state = _wait_ready(launcher, cache, port)
        assert isinstance(_complete(state), str)  # the a10 command line is accepted and serves

        # Unauthenticated calls are refused: the generated key protects the server.
        assert httpx.get(f"{state['base_url']}/models", timeout=10).status_code == 401

        # The OOM killer's way: the engine processes die, the API server lives on and hangs.
        # The supervisor must see it and restart the server (a plain SIGKILL of the server and
        # its restart are tests/test_e2e_scale.py's, on a replica of the scaled-out stack).
        first_pid = state["vllm_pid"]
        children = subprocess.run(["pgrep", "-P", str(first_pid)],
                                  capture_output=True, text=True).stdout.split()
        assert children
        for child in children:
            os.kill(int(child), signal.SIGKILL)
        _wait(lambda: _state(cache, port).get("restarts", 0) >= 1 and
              _state(cache, port).get("state") == "ready", 600, "the restart of a hung server",
              launcher)
        restarted = _state(cache, port)
        assert restarted["vllm_pid"] != first_pid
        assert restarted["api_key"] == state["api_key"]  # serving again, same key
        assert isinstance(_complete(_state(cache, port)), str)
    finally:
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=60)
    assert launcher.returncode == 0
    _wait(lambda: not _vllm_pids(port), 30, "every vLLM process to exit")
    assert not (cache / "run" / f"sidecar-{port}.json").exists()


def test_server_that_never_gets_healthy_is_stopped_with_its_log(tiny_model, tmp_path):
    port, cache = free_port(), tmp_path / "cache"
    launcher = _serve(tiny_model, port, cache, HYMT_STARTUP_TIMEOUT="3")
    _, err = launcher.communicate(timeout=120)
    assert launcher.returncode == 4
    assert "did not become healthy within 3 s" in err
    assert "Last lines of" in err and "=== hymt-chat: starting vLLM at" in err  # the log's tail
    _wait(lambda: not _vllm_pids(port), 30, "the unhealthy server to be stopped")


def test_server_that_crashes_at_start_reports_exit(tiny_model, tmp_path):
    # The tiny model under an architecture vLLM does not know: vLLM exits while it resolves the
    # model's config, before any engine process or weight (the launcher cannot tell it apart
    # from a later crash: both are an exit before /health answered).
    broken = tmp_path / "unknown-architecture"
    shutil.copytree(tiny_model, broken)
    config = json.loads((broken / "config.json").read_text())
    config["architectures"] = ["NoSuchModelForCausalLM"]
    (broken / "config.json").write_text(json.dumps(config))
    port, cache = free_port(), tmp_path / "cache"
    launcher = _serve(broken, port, cache)
    _, err = launcher.communicate(timeout=600)
    assert launcher.returncode == 4
    assert "vLLM exited with code" in err and "while starting" in err
    assert not _vllm_pids(port)


def test_stop_signal_during_start_up_stops_everything(tiny_model, tmp_path):
    port, cache = free_port(), tmp_path / "cache"
    launcher = _serve(tiny_model, port, cache)
    _wait(lambda: _vllm_pids(port), 60, "vLLM to be spawned")
    launcher.send_signal(signal.SIGTERM)  # long before it is healthy
    launcher.wait(timeout=60)
    assert launcher.returncode == 0
    _wait(lambda: not _vllm_pids(port), 30, "every vLLM process to exit")
