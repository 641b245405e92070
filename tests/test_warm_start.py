"""The warm start: sampled requests with the family's sampling, sent before the sidecar says
ready (hymt_chat/sidecar/warm.py). The session's real vLLM server is warmed by it (conftest);
the supervisor's part runs against a real HTTP server."""

from __future__ import annotations

import argparse
import re
import sys

import pytest

from hymt_chat.cli.sidecar import _plan, warm_start
from hymt_chat.engine.families import get_family
from hymt_chat.settings import Settings
from hymt_chat.sidecar.launch import plan_launch
from hymt_chat.sidecar.profiles import LaunchSpec
from hymt_chat.sidecar.supervisor import Supervisor
from hymt_chat.sidecar.warm import WarmUp, warm_batches
from tests.support.ports import free_port

OFFICIAL = {"temperature": 0.7, "top_p": 0.6, "top_k": 20, "repetition_penalty": 1.05}


def test_batches_cover_one_row_the_triton_sampler_and_its_multiples_of_16():
    assert warm_batches(2) == (1, 2)
    assert warm_batches(8) == (1, 8)
    assert warm_batches(16) == (1, 8, 16)
    assert warm_batches(128) == (1, 8, 16)
    assert warm_batches(0) == (1,)


def test_the_warm_up_of_a_launch_asks_its_server_with_the_familys_prompt_and_sampling(tmp_path):
    settings = Settings(profile="h200", port=8123, base_url=None, api_key="k", cache_dir=tmp_path)
    launch = plan_launch(settings, model="/models/Hy-MT2-30B-A3B", check=False)
    warm = warm_start(launch, get_family("tencent/Hy-MT2-30B-A3B"))
    assert warm.url == "http://127.0.0.1:8123/v1/chat/completions" and warm.api_key == "k"
    assert warm.batches == (1, 8, 16)  # the profile's 64 sequences, as the 30B-A3B fits them
    body = warm.body(8)
    assert body["n"] == 8 and body["model"] == settings.served_name
    # Hy-MT2-30B-A3B's own sampling: no top-k, no penalty (not the 7B's).
    assert {k: body[k] for k in OFFICIAL} == {"temperature": 0.7, "top_p": 1.0, "top_k": -1,
                                              "repetition_penalty": 1.0}
    assert body["messages"][0]["content"].startswith("将以下文本翻译为中文")
    demo = warm_start(plan_launch(Settings(profile="cpu", port=8124, base_url=None,
                                            cache_dir=tmp_path), check=False), None)
    assert {k: demo.body(1)[k] for k in OFFICIAL} == OFFICIAL  # what the app sends the demo


def test_serve_model_warms_every_server_it_starts(tmp_path):
    settings = Settings(port=9600, base_url=None, api_key="k", cache_dir=tmp_path)
    args = argparse.Namespace(profile="a10", model="tencent/Hunyuan-MT-7B", replicas=None)
    one = _plan(settings, args, check=False).runner(settings)
    assert isinstance(one, Supervisor) and isinstance(one.warm, WarmUp)
    assert one.warm.url == "http://127.0.0.1:9600/v1/chat/completions"
    assert {k: one.warm.sampling[k] for k in OFFICIAL} == OFFICIAL
    fleet = _plan(settings, argparse.Namespace(**{**vars(args), "replicas": 2}),
                  check=False).runner(settings)
    assert [s.warm.url for s in fleet.replicas] == [  # type: ignore[union-attr]
        "http://127.0.0.1:9601/v1/chat/completions", "http://127.0.0.1:9602/v1/chat/completions"]
    assert fleet.router.warm is None  # type: ignore[union-attr]


def _http_server(tmp_path, **kw) -> Supervisor:
    port = free_port()
    spec = LaunchSpec([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], {})
    return Supervisor(spec, health_url=f"http://127.0.0.1:{port}/", log_path=tmp_path / "log",
                      name="http", **kw)


def test_the_supervisor_warms_up_after_health_and_before_it_says_ready(tmp_path):
    states: list[str] = []
    seen: list[str] = []
    server = _http_server(tmp_path, on_state=states.append)

    def warm() -> str:
        assert server.healthy()  # the server answers already
        seen.append(server.state)
        return "warm start: done"

    server.warm = warm
    server.start(timeout=60)
    try:
        assert seen == ["starting"] and states[-1] == "ready"
        log = (tmp_path / "log").read_text()
        assert log.index("warm start: done") < log.index("http ready")
    finally:
        server.stop()


def test_a_failed_warm_up_is_logged_and_the_server_still_serves(tmp_path):
    server = _http_server(tmp_path)  # http.server answers POST with 501
    server.warm = WarmUp(server.health_url + "v1/chat/completions", "", "m", "hi", OFFICIAL, (1,))
    server.start(timeout=60)
    try:
        assert server.state == "ready"
        assert re.search(r"warm start failed \(HTTP 501 for 1 sequence\(s\)",
                         (tmp_path / "log").read_text())
    finally:
        server.stop()


_PARAMS = re.compile(r"Received request \S+: params: SamplingParams\((?P<params>.*?)\), lora")


@pytest.mark.slow
def test_the_real_server_was_sent_the_familys_sampling_before_it_said_ready(demo_server):
    log = demo_server.log_path.read_text(errors="replace")
    started = log.index("=== hymt-chat: starting vLLM")
    ready = log.index("=== hymt-chat: vLLM ready", started)
    sent = [dict(item.split("=", 1) for item in m.group("params").split(", ") if "=" in item)
            for m in _PARAMS.finditer(log, started, ready)]
    assert [p["n"] for p in sent] == ["1", "2"], sent  # the session server runs 2 at once
    for params in sent:
        assert {k: float(params[k]) for k in OFFICIAL} == OFFICIAL
    assert "warm start: 2 sampled requests" in log[started:ready + 200]
