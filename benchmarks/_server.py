"""A model server for a benchmark: HYMT_BASE_URL if set, else a demo sidecar started here."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint
from hymt_chat.sidecar.launch import plan_launch
from hymt_chat.sidecar.supervisor import Supervisor


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def model_server(vllm_args: str = "") -> Iterator[Endpoint]:
    if os.environ.get("HYMT_BASE_URL"):
        s = Settings()
        yield Endpoint(s.base_url or "", s.api_key, s.model or "hymt")
        return
    settings = Settings(profile="cpu", port=_free_port(), api_key="", vllm_args=vllm_args)
    launch = plan_launch(settings)
    log = Path(settings.cache_dir) / "logs" / f"bench-{settings.port}.log"
    supervisor = Supervisor(launch.spec, health_url=f"{launch.endpoint.root}/health", log_path=log)
    print(f"starting a demo vLLM server (log: {log})…", flush=True)
    supervisor.start(timeout=900)
    try:
        yield launch.endpoint
    finally:
        supervisor.stop()
