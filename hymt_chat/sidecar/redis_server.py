"""A Redis for a one-machine trial with several app replicas (``up --app-replicas``).

It holds what the replicas must share, the rate limits: nothing to keep across a restart, so
no snapshots and no append-only file. Production points ``HYMT_REDIS_URL`` at its own Redis.
"""

from __future__ import annotations

from hymt_chat.sidecar.launch import system_binary
from hymt_chat.sidecar.profiles import LaunchSpec

__all__ = ["plan_redis"]


def plan_redis(port: int, *, host: str = "127.0.0.1", check: bool = True) -> tuple[LaunchSpec, str]:
    """(the redis-server command, the ``redis://`` URL the app replicas get)."""
    binary = system_binary("redis-server", "redis-server is missing: install it (`apt-get "
                           "install redis-server`, or `scripts/setup.sh`), or set "
                           "HYMT_REDIS_URL.", check=check)
    argv = [binary, "--bind", host, "--port", str(port), "--save", "", "--appendonly", "no",
            "--protected-mode", "yes"]
    return LaunchSpec(argv, {}), f"redis://{host}:{port}/0"
