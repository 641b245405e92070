"""The chat app processes of ``hymt-chat up``: one, or M behind HAProxy with a shared Redis.

One replica is the plain case: Chainlit on ``--app-port``.
With ``--app-replicas M`` each replica listens on the next port up (``--app-port`` + 1 … + M,
on 127.0.0.1), HAProxy takes ``--app-port`` with cookie affinity, and a Redis started here
(unless ``HYMT_REDIS_URL`` names one) holds the rate limits they share. ``--pin-apps`` gives
each app process its own cores. Each of them has a
supervisor: a replica that dies is restarted while its browsers reconnect to another one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hymt_chat.errors import SidecarError
from hymt_chat.settings import PROJECT_DIR, Settings
from hymt_chat.sidecar.endpoint import connect_host
from hymt_chat.sidecar.fleet import cpu_groups
from hymt_chat.sidecar.launch import require_free
from hymt_chat.sidecar.private import write_private
from hymt_chat.sidecar.probe import RedisPing
from hymt_chat.sidecar.profiles import LaunchSpec
from hymt_chat.sidecar.proxy import ProxyPlan, plan_proxy
from hymt_chat.sidecar.redis_server import plan_redis
from hymt_chat.sidecar.supervisor import Supervisor, start_together

__all__ = ["Apps", "app_cores", "plan_apps"]

_COOKIE = "hymt-route"  # the proxy's affinity cookie when HYMT_AFFINITY_COOKIE is empty


class _Stop(Protocol):
    """The caller's stop signal handler (cli/sidecar.py's ``_Stop``): what it must stop on
    SIGINT/SIGTERM, so that a signal during a start stops the servers already started."""

    runners: list[Any]  # cli/sidecar.py's Runners: Supervisors and Fleets


def _chainlit(host: str, port: int, env: Mapping[str, str],
              cpus: tuple[int, ...] = ()) -> LaunchSpec:
    """One app process: this venv's ``chainlit run app.py``, from the project folder."""
    return LaunchSpec([str(Path(sys.executable).with_name("chainlit")), "run",
                       str(PROJECT_DIR / "app.py"), "--headless", "--host", host,
                       "--port", str(port)], dict(env), cwd=str(PROJECT_DIR), cpus=cpus)


def app_cores(replicas: int, cores: Sequence[int]) -> list[tuple[int, ...]]:
    """``up --pin-apps``: each app replica's own share of *cores* (the ones ``up`` may use),
    as :func:`~hymt_chat.sidecar.fleet.cpu_groups` splits them for vLLM replicas. One app
    process runs its event loop on one core at a time; pinned, two replicas never take turns
    on the same core while another sits idle."""
    return [tuple(int(c) for c in group.split(",")) for group in cpu_groups(replicas, cores)]


def _status_url(host: str, port: int) -> str:
    """The app's health check: 200 while the process serves, model or not."""
    return f"http://{connect_host(host)}:{port}/hymt/status"


@dataclass
class Apps:
    """What ``up`` starts in front of the model: the app replica(s), and for several Redis and
    the proxy. :meth:`start` starts them in that order and returns the page's address."""

    front: str
    apps: list[Supervisor]
    redis: Supervisor | None = None
    proxy: Supervisor | None = None
    proxy_plan: ProxyPlan | None = None
    ports: tuple[int, ...] = ()  # every port it takes (checked against the model's by up)

    def _all(self) -> list[Supervisor]:
        return [s for s in (self.redis, *self.apps, self.proxy) if s is not None]

    def start(self, stop: _Stop) -> str:
        stop.runners.extend(self._all())
        if self.redis is not None:
            self.redis.start(timeout=30)
        try:
            start_together(self.apps, timeout=180)
        except BaseException:
            self.stop()
            raise
        if self.proxy is not None and self.proxy_plan is not None:
            write_private(self.proxy_plan.config_path, self.proxy_plan.config)
            self.proxy.start(timeout=30)
        return self.front

    def stop(self) -> None:
        """The proxy first (no new connections), then the apps, Redis last."""
        for supervisor in reversed(self._all()):
            supervisor.stop()


def plan_apps(settings: Settings, env: Mapping[str, str], *, host: str, port: int,
              replicas: int, pin: bool = False) -> Apps:
    """The app process(es) for *replicas*, checked: ports free, HAProxy and Redis installed;
    *pin*: each on its own cores (:func:`app_cores`)."""
    if replicas < 1:
        raise SidecarError("--app-replicas is 1 or more")
    cpus = (app_cores(replicas, sorted(os.sched_getaffinity(0))) if pin
            else [()] * replicas)
    logs = settings.cache_dir / "logs"
    connect = connect_host(host)
    ports = [port + i for i in range(1, replicas + 1)] if replicas > 1 else []
    for wanted in [port, *ports]:  # the page's port (the app's, or the proxy's), the replicas'
        require_free(host if wanted == port else "127.0.0.1", wanted,
                     "stop what uses it or pick --app-port")
    if replicas == 1:
        app = Supervisor(_chainlit(host, port, env, cpus[0]), health_url=_status_url(host, port),
                         log_path=logs / f"app-{port}.log", name="the chat app")
        return Apps(f"http://{connect}:{port}", [app], ports=(port,))
    redis_port = port + replicas + 1
    redis: Supervisor | None = None
    redis_url = settings.redis_url
    if not redis_url:
        require_free("127.0.0.1", redis_port, "set HYMT_REDIS_URL or pick --app-port",
                     name=" (Redis)")
        spec, redis_url = plan_redis(redis_port)
        redis = Supervisor(spec, health_url=redis_url, log_path=logs / f"redis-{redis_port}.log",
                           check=RedisPing("127.0.0.1", redis_port), name="redis")
    cookie = settings.affinity_cookie or _COOKIE
    proxies = ",".join(p for p in (settings.trusted_proxies, "127.0.0.1") if p)
    shared = {**env, "HYMT_REDIS_URL": redis_url, "HYMT_APP_REPLICAS": str(replicas),
              "HYMT_AFFINITY_COOKIE": cookie, "HYMT_TRUSTED_PROXIES": proxies}
    from hymt_chat.service.web import allowed_hosts  # here: the CLI starts without FastAPI

    if allowed_hosts(settings, host) is None:  # the proxy, beyond loopback, takes any name:
        shared["HYMT_ALLOWED_HOSTS"] = "*"  # the replicas (on loopback) would refuse them
    apps = [Supervisor(_chainlit("127.0.0.1", p, {**shared,
                                                  "HYMT_LOG_FILE": str(logs / f"app-{p}.jsonl")},
                                 cpus[i - 1]),
                       health_url=_status_url("127.0.0.1", p), log_path=logs / f"app-{p}.log",
                       name=f"app replica {i}")
            for i, p in enumerate(ports, start=1)]
    proxy = plan_proxy([("127.0.0.1", p) for p in ports], host=host, port=port, cookie=cookie,
                       config_path=settings.cache_dir / f"haproxy-{port}.cfg")
    front = Supervisor(proxy.spec, health_url=proxy.health_url,
                       log_path=logs / f"haproxy-{port}.log", name="haproxy")
    taken = (port, *ports, *((redis_port,) if redis is not None else ()))
    return Apps(f"http://{connect}:{port}", apps, redis, front, proxy, taken)
