"""One Runtime per app: built from its own settings, sharing nothing with another, passed down
to everything that uses it, and closed with everything it started."""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path

from hymt_chat.engine.client import ModelClients
from hymt_chat.engine.fidelity import CheckEvent
from hymt_chat.engine.recall import Memory
from hymt_chat.modes.runtime import Runtime
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint

PACKAGE = Path(__file__).resolve().parent.parent / "hymt_chat"
# What a Runtime owns: none of them may be built by a module on import.
OWNED = {"ModelClient", "ModelClients", "Policy", "WindowWatch", "FusionRoute", "Metrics",
         "RateLimiter", "Readiness", "Memory", "Rooms", "Desk", "Runtime", "Shared", "Hooks",
         "AuditLog"}


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(base_url="http://127.0.0.1:9/v1", api_key="k", model="m",
                    cache_dir=tmp_path / "cache", **overrides)  # type: ignore[arg-type]


def test_no_module_builds_what_a_runtime_owns():
    built = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            call = value.func if isinstance(value, ast.Call) else None
            name = (call.id if isinstance(call, ast.Name)
                    else call.attr if isinstance(call, ast.Attribute) else None)
            if name in OWNED:
                built.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    assert built == []


def test_each_runtime_is_built_from_its_own_settings(tmp_path):
    one = Runtime(_settings(tmp_path, window_max=5, rate_limit="1/minute"))
    two = Runtime(_settings(tmp_path, window_max=3, room_hours=2))
    assert (one.policy.window, two.policy.window) == (5, 3)
    assert one.translator.policy is one.policy and two.translator.policy is two.policy
    assert one.translator.client is one.clients.current()
    assert one.readiness is not two.readiness and one.metrics is not two.metrics
    assert one.desk is not None and two.rooms is not one.rooms
    assert one.watch is None  # HYMT_WINDOW_MAX fixes the window: nothing reads the engine
    assert Runtime(_settings(tmp_path)).watch is not None
    one.limiter.hit("a")
    two.limiter.hit("a")
    two.limiter.hit("a")  # the other app's allowance is its own (unlimited here)
    services = one.services(max_files=3)
    assert services.translator is one.translator and services.max_files == 3
    assert services.desk is one.desk and services.limiter is one.limiter
    assert services.audit_log is one.audit


def test_the_memory_is_the_runtimes_and_on_only_with_the_checks(tmp_path):
    assert isinstance(Runtime(_settings(tmp_path, memory=True, checks=True)).memory, Memory)
    assert Runtime(_settings(tmp_path, memory=True, checks=False)).memory is None


def test_one_client_per_endpoint_kept_until_the_endpoint_changes(tmp_path):
    clients = ModelClients(_settings(tmp_path))
    first = clients.current()
    assert clients.current() is first and first.endpoint.base_url == "http://127.0.0.1:9/v1"
    moved = clients.at(Endpoint("http://127.0.0.1:10/v1", "new-key", "m"))
    assert moved is not first and clients.at(moved.endpoint) is moved


def test_racing_threads_get_one_client(tmp_path):
    clients = ModelClients(_settings(tmp_path))
    start = threading.Barrier(8)
    got: list[object] = []

    def worker() -> None:
        start.wait()
        got.append(clients.current())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(map(id, got))) == 1


async def test_close_stops_what_it_started_and_lets_go_of_the_checks(tmp_path):
    async with Runtime(_settings(tmp_path, memory=True, checks=True)) as runtime:
        assert runtime.watch is not None and runtime.watch._task is not None
        assert runtime.readiness._task is not None
        tasks = [runtime.watch._task, runtime.readiness._task]
        assert not any(t.done() for t in tasks)
        assert runtime.memory is not None
        assert runtime.metrics.observe_check in runtime.engine.check_hooks._hooks
        assert runtime.metrics.observe_memory in runtime.memory.hooks._hooks
    await asyncio.sleep(0)  # let the cancelled tasks finish their unwinding
    assert all(t.done() for t in tasks)
    assert runtime.metrics.observe_check not in runtime.engine.check_hooks._hooks
    assert runtime.metrics.observe_memory not in runtime.memory.hooks._hooks


def test_two_runtimes_count_their_own_checks(tmp_path):
    one, two = Runtime(_settings(tmp_path)), Runtime(_settings(tmp_path))
    one.engine.check_hooks.emit(CheckEvent("flagged", "amount"))
    assert 'kind="amount",outcome="flagged"} 1.0' in one.metrics.render()[0].decode()
    assert 'kind="amount",outcome="flagged"}' not in two.metrics.render()[0].decode()


async def test_the_retention_sweeper_runs_with_the_runtime_only_when_retention_is_set(tmp_path):
    async with Runtime(_settings(tmp_path)) as kept_forever:
        assert kept_forever._sweeper is None
    async with Runtime(_settings(tmp_path, retention_days=30)) as runtime:
        sweeper = runtime._sweeper
        assert sweeper is not None and not sweeper.done()
    assert sweeper.done()
