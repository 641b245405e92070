"""The plans behind ``--replicas`` and ``--app-replicas`` (tests/test_e2e_scale.py runs them):
ports, the shared key, GPU groups, the window's share, HAProxy's config (checked by the real
haproxy), Redis's ping, and servers started side by side surviving the thread that waited."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hymt_chat.cli.apps import plan_apps
from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.fleet import Fleet, cpu_groups, device_groups, plan_fleet
from hymt_chat.sidecar.probe import RedisPing
from hymt_chat.sidecar.profiles import LaunchSpec
from hymt_chat.sidecar.proxy import plan_proxy
from hymt_chat.sidecar.redis_server import plan_redis
from hymt_chat.sidecar.supervisor import Supervisor, start_together
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[1]


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_replicas_take_the_next_ports_one_key_and_the_router_the_sidecars(tmp_path) -> None:
    settings = Settings(profile="cpu", port=9100, api_key="", base_url=None, cache_dir=tmp_path)
    plan = plan_fleet(settings, 3, check=False)
    ports = [_flag(launch.spec.argv, "--port") for launch in plan.replicas]
    assert ports == ["9101", "9102", "9103"]
    keys = {launch.spec.env["VLLM_API_KEY"] for launch in plan.replicas}
    assert len(keys) == 1 and plan.endpoint.api_key in keys  # the router passes it through
    argv = plan.router.spec.argv
    assert _flag(argv, "--port") == "9100" and _flag(argv, "--prometheus-port") == "9104"
    assert sorted(plan.ports) == [9100, 9101, 9102, 9103, 9104]  # what up checks for clashes
    i = argv.index("--worker-urls")
    assert argv[i + 1:i + 4] == [f"http://127.0.0.1:{p}" for p in ports]
    assert plan.endpoint.base_url == "http://127.0.0.1:9100/v1"
    assert not any("CUDA_VISIBLE_DEVICES" in launch.spec.env for launch in plan.replicas)


def test_a_fleet_bound_to_every_interface_is_reached_and_checked_on_the_loopback(
        tmp_path) -> None:
    plan = plan_fleet(Settings(profile="cpu", port=9150, host="0.0.0.0", base_url=None,
                               cache_dir=tmp_path), 2, check=False)
    assert _flag(plan.router.spec.argv, "--host") == "0.0.0.0"  # it listens everywhere
    assert plan.endpoint.base_url == "http://127.0.0.1:9150/v1"
    assert Fleet(plan).router.health_url == "http://127.0.0.1:9150/liveness"
    assert [launch.endpoint.root for launch in plan.replicas] == [
        "http://127.0.0.1:9151", "http://127.0.0.1:9152"]


def test_gpu_replicas_get_their_own_devices_tensor_parallel_size_each(tmp_path) -> None:
    settings = Settings(profile="a10", port=9200, base_url=None, tensor_parallel_size=2,
                        cache_dir=tmp_path)
    plan = plan_fleet(settings, 2, check=False)
    assert [launch.spec.env["CUDA_VISIBLE_DEVICES"] for launch in plan.replicas] == [
        "0,1", "2,3"]
    with pytest.raises(SidecarError, match="need 6 GPUs; this host has 4"):
        device_groups(3, 2, 4)
    with pytest.raises(SidecarError, match="2 or more"):
        plan_fleet(settings, 1, check=False)


def test_cpu_replicas_get_their_own_cores(tmp_path) -> None:
    """vLLM's CPU build binds its OpenMP threads to VLLM_CPU_OMP_THREADS_BIND ("auto": the
    same first cores for every server on the host, vllm/utils/ompmultiprocessing.py)."""
    settings = Settings(profile="cpu", port=9250, base_url=None, cache_dir=tmp_path)
    plan = plan_fleet(settings, 2, check=False, cores=lambda: [0, 1, 2, 3, 4])
    assert [launch.spec.env["VLLM_CPU_OMP_THREADS_BIND"] for launch in plan.replicas] == [
        "0,1", "2,3"]
    assert cpu_groups(2, [1, 0]) == ["0", "1"]  # the 2-core machine: one each
    assert cpu_groups(3, [0, 1]) == ["0", "1", "0"]  # more replicas than cores: spread
    with pytest.raises(SidecarError, match="no CPU cores"):
        cpu_groups(2, [])


def test_serve_model_dry_run_prints_every_replica_and_the_router() -> None:
    result = subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "serve-model",
                             "--replicas", "2", "--profile", "cpu", "--port", "9300",
                             "--dry-run"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3
    assert "--port 9301" in lines[0] and "--port 9302" in lines[1]
    assert "vllm_router.launch_router" in lines[2] and "--policy round_robin" in lines[2]


@pytest.mark.parametrize(("replicas", "apps", "window"), [(1, 1, 4), (2, 1, 8), (2, 2, 4),
                                                         (1, 3, 2), (2, 3, 3)])
def test_each_app_replica_takes_its_share_of_the_engines_slots(replicas, apps, window) -> None:
    """cpu profile: 4 sequences per vLLM server; shares rounded up (never 0)."""
    settings = Settings(profile="cpu", base_url="http://router:8000/v1", replicas=replicas,
                        app_replicas=apps)
    assert engine_slots(settings) == window
    assert engine_slots(settings.model_copy(update={"window_max": 5})) == 5  # set: it wins


def test_the_proxy_config_is_valid_for_the_real_haproxy_with_cookie_affinity(tmp_path) -> None:
    plan = plan_proxy([("127.0.0.1", 9401), ("127.0.0.1", 9402)], host="0.0.0.0", port=9400,
                      cookie="hymt-route", config_path=tmp_path / "haproxy.cfg")
    plan.config_path.write_text(plan.config)
    check = subprocess.run([plan.spec.argv[0], "-c", "-f", str(plan.config_path)],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "cookie hymt-route insert preserve" in plan.config  # room hops set it themselves
    assert "option redispatch" in plan.config
    assert "insert indirect" not in plan.config  # the app reads the cookie for room links
    assert "server app1 127.0.0.1:9401" in plan.config and "cookie app2" in plan.config
    assert plan.health_url == "http://127.0.0.1:9400/-/proxy-health"


def test_up_with_app_replicas_plans_redis_the_proxy_and_what_each_replica_is_told(
        tmp_path) -> None:
    settings = Settings(cache_dir=tmp_path, affinity_cookie="", trusted_proxies="10.0.0.1")
    port = free_port()
    apps = plan_apps(settings, {"HYMT_BASE_URL": "http://x/v1"}, host="127.0.0.1", port=port,
                     replicas=2)
    assert apps.redis is not None and apps.proxy is not None and len(apps.apps) == 2
    env = apps.apps[0].spec.env
    assert env["HYMT_REDIS_URL"] == f"redis://127.0.0.1:{port + 3}/0"
    assert env["HYMT_APP_REPLICAS"] == "2" and env["HYMT_BASE_URL"] == "http://x/v1"
    assert env["HYMT_TRUSTED_PROXIES"] == "10.0.0.1,127.0.0.1"  # the proxy's X-Forwarded-For
    assert env["HYMT_AFFINITY_COOKIE"] == "hymt-route"
    logs = {a.spec.env["HYMT_LOG_FILE"] for a in apps.apps}
    assert len(logs) == 2  # a rotating file shared by two processes loses lines
    assert [_flag(a.spec.argv, "--port") for a in apps.apps] == [str(port + 1), str(port + 2)]
    given = plan_apps(settings.model_copy(update={"redis_url": "redis://elsewhere:6379/1"}), {},
                      host="127.0.0.1", port=port, replicas=2)
    assert given.redis is None and given.apps[1].spec.env["HYMT_REDIS_URL"].endswith("/1")
    one = plan_apps(settings, {}, host="127.0.0.1", port=port, replicas=1)
    assert one.proxy is None and one.redis is None and _flag(one.apps[0].spec.argv,
                                                             "--port") == str(port)


@pytest.mark.parametrize("replicas", [1, 2])
def test_up_refuses_an_app_port_in_use_with_the_fix(tmp_path, replicas) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SidecarError, match=f"Port {port} is already in use.*--app-port"):
            plan_apps(Settings(cache_dir=tmp_path), {}, host="127.0.0.1", port=port,
                      replicas=replicas)


def test_redis_ping_tells_a_real_redis_from_nothing(tmp_path) -> None:
    port = free_port()
    spec, url = plan_redis(port)
    redis = Supervisor(spec, health_url=url, log_path=tmp_path / "redis.log",
                       check=RedisPing("127.0.0.1", port), name="redis")
    redis.start(timeout=30)
    try:
        assert RedisPing("127.0.0.1", port)()
    finally:
        redis.stop()
    assert not RedisPing("127.0.0.1", port)()


def test_fleet_state_is_ready_while_the_router_and_one_replica_are(tmp_path) -> None:
    fleet = Fleet(plan_fleet(Settings(profile="cpu", port=9500, base_url=None,
                                      cache_dir=tmp_path), 2, check=False))
    assert fleet.state() == "starting"
    # Not /health: the router's is 503 while any one replica is down, and its supervisor
    # restarted a healthy router mid-burst (measured).
    assert fleet.router.health_url.endswith("/liveness")
    fleet.router.state = "ready"
    fleet.replicas[0].state, fleet.replicas[1].state = "ready", "restarting"
    assert fleet.state() == "ready"  # the router sends everything to the survivor
    fleet.replicas[0].state = "restarting"
    assert fleet.state() == "restarting"


def test_a_launched_fleet_tells_the_app_each_replicas_metrics_page(tmp_path) -> None:
    """vllm-router forwards /metrics to one replica at a time (measured, 0.1.17): the state
    file lists every replica's own page, which the app's window reads and adds up."""
    from hymt_chat.cli.sidecar import Model
    from hymt_chat.sidecar.engine_load import metrics_urls

    settings = Settings(profile="cpu", port=9600, base_url=None, cache_dir=tmp_path)
    plan = plan_fleet(settings, 2, check=False)
    fleet = Model(plan.replicas[0], plan.endpoint, plan).runner(settings)
    assert metrics_urls(settings) == ("http://127.0.0.1:9600/metrics",)  # no state file yet
    fleet.on_state("ready")  # type: ignore[union-attr] - what a supervisor's change calls
    assert metrics_urls(settings) == ("http://127.0.0.1:9601/metrics",
                                      "http://127.0.0.1:9602/metrics")
    by_url = settings.model_copy(update={"base_url": "http://127.0.0.1:9600/v1"})
    assert metrics_urls(by_url) == ("http://127.0.0.1:9600/metrics",)  # the URL, as given


def test_servers_started_together_outlive_the_thread_that_waited_for_them(tmp_path) -> None:
    """The children's parent-death signal fires when the thread that forked them ends: a
    server spawned by a short-lived thread got SIGTERM as soon as it was ready (both vLLM
    replicas restarted once, measured). start_together spawns from the caller's thread."""
    ports = [free_port(), free_port()]
    servers = [Supervisor(LaunchSpec([sys.executable, "-m", "http.server", str(p), "--bind",
                                      "127.0.0.1"], {}), health_url=f"http://127.0.0.1:{p}/",
                          log_path=tmp_path / f"http-{p}.log", name="http") for p in ports]
    try:
        start_together(servers, timeout=60)
        pids = [s.pid for s in servers]  # the threads that waited for them have ended
        time.sleep(3)  # a SIGTERM would have arrived at once; the watch polls every 2 s
        assert [s.pid for s in servers] == pids and all(s.restarts == 0 for s in servers)
        assert all(s.healthy() for s in servers)
    finally:
        for server in servers:
            server.stop()


def test_up_refuses_model_and_app_ports_that_overlap_before_starting_anything() -> None:
    """Each plan checks its own ports; together --app-replicas 12 from 9690 runs into the
    router and replicas from 9700."""
    result = subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "up", "--replicas", "2",
                             "--port", "9700", "--app-port", "9690", "--app-replicas", "12"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 4, result.stderr
    assert "overlap at 9700, 9701, 9702, 9703" in result.stderr
    assert not (Settings(port=9700).cache_dir / "run" / "sidecar-9700.json").exists()


def test_pinned_app_replicas_get_disjoint_cores_and_run_on_them(tmp_path) -> None:
    """``up --pin-apps``: each replica its own share of the cores up may use; the process the
    supervisor starts is held to them (read back from the kernel, /proc/<pid>/status)."""
    import os

    from hymt_chat.cli.apps import app_cores

    assert app_cores(2, [0, 1, 2, 3]) == [(0, 1), (2, 3)]
    assert app_cores(3, [4, 5]) == [(4,), (5,), (4,)]  # fewer cores: spread round-robin
    allowed = sorted(os.sched_getaffinity(0))
    settings = Settings(cache_dir=tmp_path)
    pinned = plan_apps(settings, {}, host="127.0.0.1", port=free_port(), replicas=2, pin=True)
    shares = [a.spec.cpus for a in pinned.apps]
    assert shares == app_cores(2, allowed) and all(shares)
    if len(allowed) >= 2:
        assert not set(shares[0]) & set(shares[1])
    assert plan_apps(settings, {}, host="127.0.0.1", port=free_port(),
                     replicas=2).apps[0].spec.cpus == ()
    spec = LaunchSpec([sys.executable, "-c", "import os, time; print(sorted("
                       "os.sched_getaffinity(0)), flush=True); time.sleep(30)"], {},
                      cpus=shares[-1])
    supervisor = Supervisor(spec, health_url="http://127.0.0.1:9/none",
                            log_path=tmp_path / "pinned.log", name="pinned")
    supervisor._spawn()
    try:
        proc = supervisor._proc
        assert proc is not None
        status = Path(f"/proc/{proc.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("Cpus_allowed_list"))
        listed = line.split(":")[1].strip()
        assert listed == ",".join(map(str, shares[-1])) or listed == (
            f"{shares[-1][0]}-{shares[-1][-1]}")
    finally:
        supervisor.stop()
