"""The sticky proxy (HAProxy, from the system's packages) in front of several app replicas.

Chainlit keeps a tab's session in the process that holds its websocket, so a browser must stay
with one replica: HAProxy inserts the affinity cookie (``HYMT_AFFINITY_COOKIE``, the one room
links carry) on the first answer and routes by it after. When that replica is gone (refused
connections, a failed check), ``option redispatch`` sends the browser to another one; its
page reconnects there and goes on.

The socket.io traffic is websocket only (``.chainlit/config.toml``): one long-lived tunnel per
tab, so the tunnel timeout, not the request timeout, decides how long a quiet tab may stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.endpoint import connect_host
from hymt_chat.sidecar.launch import system_binary
from hymt_chat.sidecar.profiles import LaunchSpec

__all__ = ["HEALTH_PATH", "ProxyPlan", "haproxy_config", "plan_proxy"]

HEALTH_PATH = "/-/proxy-health"  # answered by HAProxy itself (monitor-uri): the proxy is up


def haproxy_config(
    backends: Sequence[tuple[str, int]], *, host: str, port: int, cookie: str,
) -> str:
    """haproxy.cfg for *backends* (host, port): cookie affinity, redispatch, websockets.

    Checks are TCP connects every second, down after one miss: a killed replica refuses
    connections at once, and the next connect of its browsers goes elsewhere."""
    if not backends:
        raise SidecarError("the proxy needs at least one app replica")
    servers = "\n".join(f"    server app{i} {h}:{p} check inter 1s fall 1 rise 2 cookie app{i}"
                        for i, (h, p) in enumerate(backends, start=1))
    return f"""# Written by hymt-chat up --app-replicas; rewritten at every start.
# No global maxconn: HAProxy derives it from the file-descriptor limit it is given.
defaults
    mode http
    option http-server-close
    option redispatch
    retries 3
    timeout connect 2s
    timeout client 60s
    timeout server 300s
    timeout tunnel 1h
    timeout http-request 10s

frontend chat
    bind {host}:{port}
    monitor-uri {HEALTH_PATH}
    option forwardfor
    default_backend apps

backend apps
    balance leastconn
    # Not "indirect": that would strip the cookie before the app, which reads it for room links.
    # "preserve": a replica that sets the cookie itself (a room link's hop to the agent's
    # replica, room/page.py) is left alone instead of being overwritten with its own name.
    cookie {cookie} insert preserve nocache httponly
{servers}
"""


@dataclass(frozen=True, slots=True)
class ProxyPlan:
    """HAProxy's command and its config, written to *config_path* just before it starts."""

    spec: LaunchSpec
    config: str
    config_path: Path
    health_url: str


def plan_proxy(backends: Sequence[tuple[str, int]], *, host: str, port: int, cookie: str,
               config_path: Path, check: bool = True) -> ProxyPlan:
    """The HAProxy command (in the foreground, its config at *config_path*)."""
    binary = system_binary("haproxy", "HAProxy is missing: install it (`apt-get install "
                           "haproxy`, or `scripts/setup.sh`) for --app-replicas.", check=check)
    config = haproxy_config(backends, host=host, port=port, cookie=cookie)
    return ProxyPlan(LaunchSpec([binary, "-db", "-f", str(config_path)], {}), config,
                     config_path, f"http://{connect_host(host)}:{port}{HEALTH_PATH}")
