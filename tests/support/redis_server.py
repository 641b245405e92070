"""A real, throwaway Redis (Debian's ``redis-server``) on a free port, for tests of shared state:
started the way ``hymt-chat up --app-replicas`` starts its own (``plan_redis``, a Supervisor
waiting for PING)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hymt_chat.sidecar.probe import RedisPing
from hymt_chat.sidecar.redis_server import plan_redis
from hymt_chat.sidecar.supervisor import Supervisor
from tests.support.ports import free_port


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Yield ``redis://127.0.0.1:PORT/0`` once it answers PING; stop it afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    spec, url = plan_redis(port)  # SidecarError with the fix when redis-server is missing
    redis = Supervisor(spec, health_url=url, log_path=folder / "redis.log",
                       check=RedisPing("127.0.0.1", port), name="redis")
    redis.start(timeout=20)
    try:
        yield url
    finally:
        redis.stop()
