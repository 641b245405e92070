"""Several vLLM replicas behind vllm-router on the sidecar's port: ``serve-model --replicas N``.

Each replica is an ordinary sidecar launch (the same profile, flags and checks) on its own
port, with its own GPUs (``CUDA_VISIBLE_DEVICES``, tensor- × data-parallel size each) or, on CPU, a
small server of its own on its own cores (``VLLM_CPU_OMP_THREADS_BIND``). All share one API key: the router passes the client's key through to
whichever replica it picks. The router takes the sidecar's port, so the app, the state file
and ``/health`` see one server, as with a single replica.

Each replica has its own :class:`~hymt_chat.sidecar.supervisor.Supervisor` (restarted when
it dies, while the router's health checks and circuit breaker send its share elsewhere); the
router has one too. They start side by side: N model loads in the time of one where the
machine allows (:func:`~hymt_chat.sidecar.supervisor.start_together`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, connect_host
from hymt_chat.sidecar.launch import Launch, gpu_count, plan_launch, require_free, server_key
from hymt_chat.sidecar.router import RouterPlan, plan_router
from hymt_chat.sidecar.supervisor import Supervisor, WarmStart, start_together

__all__ = ["Fleet", "FleetPlan", "cpu_groups", "device_groups", "plan_fleet"]


def device_groups(replicas: int, per_replica: int, available: int) -> list[str]:
    """``CUDA_VISIBLE_DEVICES`` of each replica: consecutive GPUs, *per_replica* each
    (tensor- times data-parallel size: one replica's own vLLM spans them all)."""
    need = replicas * per_replica
    if need > available:
        raise SidecarError(
            f"{replicas} replicas of {per_replica} GPU(s) each need {need} GPUs; this host has "
            f"{available}. Lower --replicas, HYMT_TENSOR_PARALLEL_SIZE or "
            "HYMT_DATA_PARALLEL_SIZE.")
    return [",".join(str(g) for g in range(i * per_replica, (i + 1) * per_replica))
            for i in range(replicas)]


def cpu_groups(replicas: int, cores: Sequence[int]) -> list[str]:
    """``VLLM_CPU_OMP_THREADS_BIND`` of each CPU replica: its own consecutive share of the
    *cores* this process may use. Left to vLLM's ``auto``, every replica binds the same first
    cores (measured: two replicas both on ``core ids=[0]``, 0.54x the throughput of one).
    Fewer cores than replicas: replicas share them round-robin (still spread, not stacked)."""
    ordered = sorted(cores)
    if not ordered:
        raise SidecarError("no CPU cores to run the replicas on")
    if len(ordered) < replicas:
        return [str(ordered[i % len(ordered)]) for i in range(replicas)]
    share = len(ordered) // replicas
    return [",".join(str(c) for c in ordered[i * share:(i + 1) * share]) for i in range(replicas)]


@dataclass(frozen=True, slots=True)
class FleetPlan:
    """Everything ``serve-model --replicas`` starts, planned and checked before any of it runs
    (``--dry-run`` prints :meth:`shell_lines`)."""

    replicas: tuple[Launch, ...]
    router: RouterPlan
    endpoint: Endpoint  # the router's: what the app talks to
    log_path: Path  # the router's log
    ports: tuple[int, ...]  # every port it takes: the router's, the replicas', its metrics'

    def shell_lines(self) -> list[str]:
        return [launch.spec.shell_line() for launch in self.replicas] + [
            self.router.spec.shell_line()]


def plan_fleet(
    settings: Settings,
    replicas: int,
    *,
    profile: str | None = None,
    model: str | None = None,
    check: bool = True,
    generation_config: Mapping[str, float | int] | None = None,
    gpus: Callable[[], int] = gpu_count,
    cores: Callable[[], Sequence[int]] = lambda: sorted(os.sched_getaffinity(0)),
) -> FleetPlan:
    """N replica launches on the ports after the sidecar's, and the router on the sidecar's.

    Checked before anything starts (as :func:`~hymt_chat.sidecar.launch.plan_launch`): every
    port free, enough GPUs for N × tensor- × data-parallel size, the router installed."""
    if replicas < 2:
        raise SidecarError("--replicas is 2 or more (one replica needs no router)")
    key = server_key(settings)  # one for all: the router passes it through
    shared = settings.model_copy(update={"api_key": key})
    ports = [settings.port + 1 + i for i in range(replicas)]
    metrics_port = settings.port + replicas + 1
    launches = [plan_launch(shared, profile=profile, model=model, port=port, check=check,
                            generation_config=generation_config) for port in ports]
    if launches[0].profile.device != "cpu":
        per = settings.tensor_parallel_size * settings.data_parallel_size
        variable = "CUDA_VISIBLE_DEVICES"
        groups = device_groups(replicas, per, gpus() if check else replicas * per)
    else:
        variable, groups = "VLLM_CPU_OMP_THREADS_BIND", cpu_groups(replicas, cores())
    launches = [replace(launch, spec=replace(launch.spec, env={**launch.spec.env,
                                                               variable: group}))
                for launch, group in zip(launches, groups, strict=True)]
    if check:
        for port in (settings.port, metrics_port):
            require_free(settings.host, port, "stop what uses it or pick --port",
                         name=f" on {settings.host}")
    router = plan_router([launch.endpoint.root for launch in launches],
                         vllm_python=str(settings.vllm_python), host=settings.host,
                         port=settings.port, metrics_port=metrics_port, api_key=key,
                         policy=settings.router_policy, check=check)
    endpoint = Endpoint(f"http://{connect_host(settings.host)}:{settings.port}/v1", key,
                        settings.served_name)
    log_path = settings.cache_dir / "logs" / f"router-{settings.port}.log"
    return FleetPlan(tuple(launches), router, endpoint, log_path,
                     (settings.port, *ports, metrics_port))


@dataclass
class Fleet:
    """The running replicas and router; :meth:`state` is what the state file says."""

    plan: FleetPlan
    on_state: Callable[[str], None] | None = None
    warm: Sequence[WarmStart | None] = ()  # each replica's warm start, in the plan's order
    replicas: list[Supervisor] = field(init=False)
    router: Supervisor = field(init=False)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()  # the supervisors' threads report at the same time
        notify = (lambda _state: self._notify())
        warm = [*self.warm, *[None] * (len(self.plan.replicas) - len(self.warm))]
        self.replicas = [Supervisor(launch.spec, health_url=f"{launch.endpoint.root}/health",
                                    log_path=launch.log_path, on_state=notify, warm=warm_start)
                         for launch, warm_start in zip(self.plan.replicas, warm, strict=True)]
        # /liveness, not /health: the router's /health is 503 while ANY replica is down
        # (measured, 0.1.17), and its supervisor then restarted a router that was fine — in
        # the middle of the burst it was routing away from the dead replica.
        self.router = Supervisor(self.plan.router.spec,
                                 health_url=f"{self.plan.endpoint.root}/liveness",
                                 log_path=self.plan.log_path, on_state=notify,
                                 name="vllm-router")

    def state(self) -> str:
        """"ready" while the router and at least one replica are; else the router's state, or
        "restarting" when every replica is down (the router cannot answer then)."""
        if self.router.state != "ready":
            return self.router.state if self.router.state != "stopped" else "starting"
        states = [r.state for r in self.replicas]
        if "ready" in states:
            return "ready"
        return "restarting" if "restarting" in states else "starting"

    @property
    def restarts(self) -> int:
        return sum(r.restarts for r in [*self.replicas, self.router])

    def _notify(self) -> None:
        if self.on_state is not None:
            with self._lock:
                self.on_state(self.state())

    def start(self, *, timeout: float, progress: Callable[[float], None] | None = None) -> None:
        """All replicas side by side, then the router; SidecarError (all stopped) when any
        replica fails its first start: a configuration problem, as for one replica."""
        start_together(self.replicas, timeout=timeout, progress=progress)
        try:
            self.router.start(timeout=120)
        except BaseException:
            self.stop()
            raise

    def request_stop(self) -> None:
        for supervisor in [self.router, *self.replicas]:
            supervisor.request_stop()

    def stop(self) -> None:
        self.router.stop()
        for supervisor in self.replicas:
            supervisor.stop()

    @property
    def pid(self) -> int | None:
        return self.router.pid
