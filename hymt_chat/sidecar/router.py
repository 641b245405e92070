"""vllm-router (the vLLM project's Rust router) in front of several vLLM replicas.

The app talks to one address; the router spreads requests over the replicas (round robin by
default, see :func:`plan_router`), checks their ``/health``, opens a circuit breaker on a
replica that fails and retries the request on another, so a replica that dies mid-burst costs
no message. We only build its command line; the router is started and
restarted by the same :class:`~hymt_chat.sidecar.supervisor.Supervisor` as vLLM itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.profiles import LaunchSpec

__all__ = ["KEY_FILE_VARIABLE", "KEY_VARIABLE", "POLICIES", "POLICY", "RouterPlan", "key_launcher",
           "launcher_lines", "plan_router", "router_binary", "router_flags"]

# vllm-router 0.1.17's --policy choices (its --help).
POLICIES = ("round_robin", "power_of_two", "cache_aware", "kv_aware", "consistent_hash",
            "sticky_least_loaded", "random")


def router_binary(vllm_python: str) -> Path:
    """``vllm-router`` as installed beside vLLM (PyPI ``vllm-router``, in the sidecar's venv)."""
    binary = Path(vllm_python).with_name("vllm-router")
    if not binary.exists():
        raise SidecarError(f"{binary} is missing: install it with "
                           f"`{vllm_python} -m pip install vllm-router`")
    return binary


# vllm-router 0.1.17 takes its key only as --api-key (its launcher's argparse; no environment
# variable, checked in its launcher and its Rust core): on its command line every local user
# reads it with `ps`, and a pod's spec shows it. So every router, here and deployed, starts
# through this launcher, which reads the key from the environment or from a file (a mounted
# secret) and puts it in front of the arguments inside the process.
KEY_VARIABLE = "HYMT_ROUTER_API_KEY"
KEY_FILE_VARIABLE = "HYMT_ROUTER_API_KEY_FILE"
ROUTER_MODULE = "vllm_router.launch_router"


def launcher_lines(module: str = ROUTER_MODULE) -> list[str]:
    """The launcher's Python statements, each a simple one: *module* run as ``__main__`` with
    ``--api-key=`` the key in front of its arguments; the key is read from the file
    :data:`KEY_FILE_VARIABLE` names, else from :data:`KEY_VARIABLE`, and both are taken out
    of the environment (none: the router runs without a key)."""
    return [
        "import os",
        "import runpy",
        "import sys",
        "from pathlib import Path",
        "",
        f"key = os.environ.pop({json.dumps(KEY_VARIABLE)}, \"\")",
        f"path = os.environ.pop({json.dumps(KEY_FILE_VARIABLE)}, \"\")",
        "key = Path(path).read_text(encoding=\"utf-8\").strip() if path else key",
        "sys.argv[1:1] = [f\"--api-key={key}\"] if key else []",
        f"runpy.run_module({json.dumps(module)}, run_name=\"__main__\", alter_sys=True)",
    ]


def key_launcher(module: str = ROUTER_MODULE) -> str:
    """The launcher as ``python -c`` code, one line (a command line printed or logged stays
    one line): how the app starts its own router. The router image ships the same statements
    as ``hymt-router`` (``deploy/router/launch.py``)."""
    return "; ".join(line for line in launcher_lines(module) if line)


@dataclass(frozen=True, slots=True)
class RouterPlan:
    spec: LaunchSpec
    root: str  # http://host:port, what the app's base URL points at (+ /v1)
    metrics_port: int

    def router_args(self) -> list[str]:
        """The router's arguments as it reads them (its key among them, as the deployed
        files pass it): what the launcher hands vllm-router."""
        key = self.spec.env.get(KEY_VARIABLE)
        if key is None:
            return self.spec.argv[1:]
        return [f"--api-key={key}", *self.spec.argv[3:]]


# The choices every router makes, here and in the deployed files (sidecar/deploy.py); the
# reasons are in plan_router's docstring.
POLICY = "round_robin"
HEALTH_INTERVAL = 5
RETRIES = 3
BREAKER_FAILURES = 1


def router_flags(*, host: str, port: int, metrics_port: int, api_key: str,
                 policy: str = POLICY, health_interval: int = HEALTH_INTERVAL,
                 retries: int = RETRIES, breaker_failures: int = BREAKER_FAILURES) -> list[str]:
    """The router's flags but its workers: the one list ``plan_router`` starts and the
    Compose and Kubernetes files are generated from (an empty *api_key*: none)."""
    return ["--host", host, "--port", str(port), "--policy", policy,
            "--health-check-interval-secs", str(health_interval),
            "--retry-max-retries", str(retries),
            "--cb-failure-threshold", str(breaker_failures),
            "--prometheus-host", host, "--prometheus-port", str(metrics_port),
            "--log-level", "warning",
            # One word with "=": a key may begin with "-" (token_urlsafe draws one first in 64
            # keys), which argparse reads as the next flag after a separate "--api-key".
            *([f"--api-key={api_key}"] if api_key else [])]


def plan_router(
    workers: Sequence[str],
    *,
    vllm_python: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    metrics_port: int = 29000,
    policy: str = POLICY,
    api_key: str = "",
    health_interval: int = HEALTH_INTERVAL,
    retries: int = RETRIES,
    breaker_failures: int = BREAKER_FAILURES,
    check: bool = True,
) -> RouterPlan:
    """The router's command for *workers* (``http://host:port`` roots of vLLM servers).

    *policy*: round robin by default. Measured with vllm-router 0.1.17 over two demo replicas
    (16 staggered requests): round_robin 8/8, power_of_two 12/4 (38/2 for 40 chat users),
    sticky_least_loaded 16/0. power_of_two and the load-aware policies read a worker's load
    from ``/get_load``, which vLLM does not serve (404 in its log), so they choose blind. The
    app's window keeps each replica's share small and vLLM's priority queue orders it.
    *health_interval*: seconds between its health checks (its default, 60 s, leaves a dead
    replica in the rotation for a minute; its circuit breaker and retries cover the gap).
    *breaker_failures*: failed sends that open a replica's circuit breaker. One: measured with
    vllm-router 0.1.17 and a replica SIGKILLed, its default let a burst's request come back as
    HTTP 500 (its retries went to the same dead replica); with 1 the retry goes elsewhere.
    *check*: False for a dry run (the binary need not be installed).
    """
    if not workers:
        raise SidecarError("the router needs at least one vLLM replica")
    if policy not in POLICIES:
        raise SidecarError(f"unknown router policy {policy!r}; one of {', '.join(POLICIES)}")
    if policy == "power_of_two" and len(workers) < 2:  # the router refuses it with one
        policy = "round_robin"
    binary = router_binary(vllm_python) if check else Path(vllm_python).with_name("vllm-router")
    args = ["--worker-urls", *[w.rstrip("/") for w in workers],
            *router_flags(host=host, port=port, metrics_port=metrics_port, api_key="",
                          policy=policy, health_interval=health_interval, retries=retries,
                          breaker_failures=breaker_failures)]
    if not api_key:
        return RouterPlan(LaunchSpec([str(binary), *args], {}), f"http://{host}:{port}",
                          metrics_port)
    argv = [str(Path(vllm_python)), "-c", key_launcher(), *args]  # the key: not on argv
    return RouterPlan(LaunchSpec(argv, {KEY_VARIABLE: api_key}), f"http://{host}:{port}",
                      metrics_port)
