"""Scale-out benchmark: ``hymt-chat up`` as 1 vLLM × 1 app, then as 2 vLLM replicas × 2 app
replicas, driven by the same websocket users, in one run.

Each configuration is started the way an operator would (``python -m hymt_chat.cli.main up
--replicas N --app-replicas M``, a subprocess with a private cache folder whose ``models``
links the demo model setup prepared), with the same vLLM flags for both
(``--vllm-args``, default ``--max-num-seqs 2``: two running sequences
per replica; the profiles keep stats on, for ``vllm:request_success_total``). Everything is real: vLLM's CPU
build, vllm-router, HAProxy and redis-server in the 2 × 2 case. After a short warm-up (not
counted), U socket.io clients like browser tabs, each with its own ``X-Forwarded-For``
(HYMT_TRUSTED_PROXIES=127.0.0.1 in both, so the default rate limits count each user, in
memory for 1 × 1, in Redis for 2 × 2), each send R French sentences carrying a number, one
after the other, waiting for each answer. Reported per configuration: all answered or not,
wall time (first send to last answer), messages/s, P50/P95 latency (send to answer),
requests per vLLM replica (its own ``vllm:request_success_total``: the answer checks' one
repair is a second request, so it can exceed the messages) and answers per app replica
(its ``hymt_translations_total{outcome="ok"}``), CPU seconds per answered message of each
part of the stack during the drive (vLLM; router, proxy and Redis; the apps) and what the
clients and every other process on the machine used meanwhile (a shared machine: the figure
says how much of the wall time was someone else's), and the ratios 2 × 2 ÷ 1 × 1. After the
drive, on the idle 2 × 2 stack, what one GET pays for each hop: straight to a vLLM replica
against through vllm-router, straight to an app replica against through HAProxy.

**What this machine can show.** Both vLLM replicas share the same 2 CPU cores (and the app
replicas, the router, the proxy and the clients share them too), so a second replica adds
no compute: no speed-up is expected or claimed. What the run shows is the *spread* (does the
router give each vLLM replica its half, and the proxy each app replica its half?) and the
*overhead* of the extra hops (HAProxy, vllm-router, Redis) and processes on the same cores.
On a host with one GPU per replica the model's side would scale; measure that there.

    PYTHONPATH=. .venv/bin/python benchmarks/scale_out.py [--users 40] [--messages 2]

Prints the table and writes it to docs/results/scale_out.md. It starts two model loads
per configuration's life (minutes on CPU); run nothing else heavy beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import socketio
from load import machine

from tests.support import up_stack as up

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SENTENCE = "Bonjour, ma commande numéro {} est arrivée en retard."
FRENCH = "arrivée"  # in an answer: the app's failure note, which repeats the original
REFUSED = "try again in"  # the rate limit's sentence (hymt_chat.errors)
VLLM_ARGS = "--max-num-seqs 2"
REPLICA_GIB = 5  # a demo vLLM CPU replica's resident memory here (its worker ~4.4 GiB)
FIRST = 4000  # message numbers: four digits, none a part of another


@dataclass(frozen=True, slots=True)
class Shape:
    replicas: int  # vLLM servers (behind vllm-router when more than one)
    apps: int  # app processes (behind HAProxy when more than one)

    @property
    def label(self) -> str:
        return f"{self.replicas} vLLM × {self.apps} app"


@dataclass(frozen=True, slots=True)
class Stack:
    """Where one started ``up`` listens: the front, and each part's own port."""

    front: str
    vllm_ports: list[int]
    app_ports: list[int]
    model_port: int  # the router's with replicas, else the one vLLM's
    cache: Path  # the private cache folder (the sidecar's state file holds the API key)

    @property
    def api_key(self) -> str:
        state = self.cache / "run" / f"sidecar-{self.model_port}.json"
        return json.loads(state.read_text())["api_key"]


@dataclass(frozen=True, slots=True)
class Hop:
    """One hop's cost on an idle stack: the median GET straight to the part behind it, and
    the same GET through it."""

    name: str
    direct_ms: float
    via_ms: float


def _hop(name: str, direct: str, via: str, headers: dict[str, str], n: int) -> Hop:
    """*n* GETs of each, interleaved (so that drift of a shared machine hits both alike)."""
    times: dict[str, list[float]] = {direct: [], via: []}
    with httpx.Client(timeout=30, headers=headers) as client:
        for _ in range(n):
            for url in (direct, via):
                began = time.perf_counter()
                client.get(url).raise_for_status()
                times[url].append((time.perf_counter() - began) * 1000)
    return Hop(name, statistics.median(times[direct]), statistics.median(times[via]))


def hops(stack: Stack, n: int = 50) -> list[Hop]:
    """vllm-router's hop (``/v1/models``, which it passes to a replica) and HAProxy's
    (``/hymt/status``, an app's cheapest route), measured on the idle 2 × 2 stack."""
    found: list[Hop] = []
    if len(stack.vllm_ports) > 1:
        found.append(_hop("vllm-router", f"http://127.0.0.1:{stack.vllm_ports[0]}/v1/models",
                          f"http://127.0.0.1:{stack.model_port}/v1/models",
                          {"Authorization": f"Bearer {stack.api_key}"}, n))
    if len(stack.app_ports) > 1:
        found.append(_hop("HAProxy", f"http://127.0.0.1:{stack.app_ports[0]}/hymt/status",
                          f"{stack.front}/hymt/status", {}, n))
    return found


@dataclass(frozen=True, slots=True)
class Outcome:
    seconds: float | None  # send to answer; None when lost (no answer in the timeout)
    state: str  # answered | untranslated | refused | lost


PARTS = ("vLLM", "router, proxy, Redis", "apps")


def _part(server: psutil.Process) -> str:
    """Which part of the stack a server ``up`` started is, by its command line (its own: its
    children rename themselves, ``VLLM::EngineCore``; the router calls itself ``vllm::router``)."""
    line = " ".join(server.cmdline()).lower()
    if any(name in line for name in ("router", "haproxy", "redis-server")):
        return PARTS[1]
    return PARTS[0] if ".venv-vllm" in line else PARTS[2]  # apps: chainlit


@dataclass(frozen=True, slots=True)
class Cpu:
    """CPU seconds spent during the drive, by whom (psutil; user + system)."""

    seconds: float  # the drive's wall time: the machine had cores × this to give
    parts: dict[str, float]  # the stack under ``up``, by part
    clients: float  # this process: the socket.io users
    others: float  # everything else on the machine (other users' tests, the kernel's work)


class CpuMeter:
    """Snapshots of the machine's busy time and of every process under ``up``. vLLM's CPU
    threads spin while they wait, so its figure follows the wall time more than the work;
    the other parts' seconds per message are the overhead the scale-out adds."""

    def __init__(self, root: int) -> None:
        self.root = psutil.Process(root)

    def _stack(self) -> dict[tuple[int, float], tuple[str, float]]:
        """(pid, start time) -> (part, CPU seconds so far) of ``up`` (an app-side process)
        and each server it started with all of that server's descendants."""
        groups: list[tuple[str, list[psutil.Process]]] = [(PARTS[2], [self.root])]
        for server in self.root.children():
            try:
                groups.append((_part(server), [server, *server.children(recursive=True)]))
            except psutil.Error:  # gone in between
                continue
        seen: dict[tuple[int, float], tuple[str, float]] = {}
        for part, processes in groups:
            for process in processes:
                try:
                    with process.oneshot():
                        t = process.cpu_times()
                        seen[(process.pid, process.create_time())] = (
                            part, t.user + t.system + t.children_user + t.children_system)
                except psutil.Error:
                    continue
        return seen

    @staticmethod
    def _busy() -> float:
        t = psutil.cpu_times()
        return t.user + t.nice + t.system + t.irq + t.softirq

    @staticmethod
    def _own() -> float:
        t = psutil.Process().cpu_times()
        return t.user + t.system

    def start(self) -> None:
        self.began = time.perf_counter()
        self.busy, self.own, self.stack = self._busy(), self._own(), self._stack()

    def stop(self) -> Cpu:
        seconds = time.perf_counter() - self.began
        busy, own = self._busy() - self.busy, self._own() - self.own
        parts = dict.fromkeys(PARTS, 0.0)
        for key, (part, cpu) in self._stack().items():
            parts[part] += cpu - self.stack.get(key, (part, 0.0))[1]
        return Cpu(seconds, parts, own, max(0.0, busy - own - sum(parts.values())))


@dataclass
class Result:
    shape: Shape
    command: str
    ready_s: float  # start of ``up`` until every part answered its health check
    outcomes: list[Outcome]
    wall: float
    by_vllm: list[float]
    by_app: list[float]
    cpu: Cpu
    hops: list[Hop]

    def count(self, state: str) -> int:
        return sum(o.state == state for o in self.outcomes)

    @property
    def latencies(self) -> list[float]:
        return sorted(o.seconds for o in self.outcomes if o.state == "answered"
                      and o.seconds is not None)

    def per_message(self, part: str) -> float:
        """CPU seconds *part* spent per answered message during the drive."""
        answered = self.count("answered")
        return self.cpu.parts[part] / answered if answered else float("nan")

    @property
    def rate(self) -> float:
        return self.count("answered") / self.wall if self.wall > 0 else float("nan")

    def pct(self, q: int) -> float:
        values = self.latencies
        if len(values) < 2:
            return values[0] if values else float("nan")
        return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


class Browser:
    """One tab like Chainlit's page: a websocket session (socket.io at ``/ws/socket.io``)
    with its own client address, that sends a sentence and waits for the answer carrying its
    number; the answer's arrival is timed in the event handler, not by polling."""

    def __init__(self, url: str, address: str) -> None:
        self.url, self.address = url, address
        self.client = socketio.AsyncClient()
        self.waiting: dict[int, asyncio.Future[tuple[float, str]]] = {}

        async def said(data: dict | None = None) -> None:
            output = (data or {}).get("output") or ""
            now = time.perf_counter()
            for number, fut in list(self.waiting.items()):
                if fut.done():
                    continue
                if re.search(rf"\b{number}\b", output) or REFUSED in output:
                    fut.set_result((now, output))

        self.client.on("new_message", said)
        self.client.on("update_message", said)

    async def open(self) -> None:
        await self.client.connect(self.url, socketio_path="/ws/socket.io",
                                  transports=["websocket"], wait_timeout=30,
                                  headers={"X-Forwarded-For": self.address},
                                  auth={"sessionId": str(uuid.uuid4()), "clientType": "webapp",
                                        "userEnv": "{}"})
        await self.client.emit("connection_successful")

    async def close(self) -> None:
        await self.client.disconnect()

    async def ask(self, number: int, timeout: float) -> Outcome:
        fut: asyncio.Future[tuple[float, str]] = asyncio.get_running_loop().create_future()
        self.waiting[number] = fut
        start = time.perf_counter()
        await self.client.emit("client_message", {"message": {
            "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
            "output": SENTENCE.format(number), "createdAt": "2026-01-01T00:00:00Z"},
            "fileReferences": None})
        try:
            at, output = await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return Outcome(None, "lost")
        finally:
            del self.waiting[number]
        if REFUSED in output:
            return Outcome(at - start, "refused")
        return Outcome(at - start, "untranslated" if FRENCH in output else "answered")


def _users(front: str, count: int, first_address: int) -> list[Browser]:
    return [Browser(front, f"10.{first_address + n // 250}.0.{n % 250 + 1}")
            for n in range(count)]


async def _open(tabs: list[Browser]) -> None:
    for i in range(0, len(tabs), 16):  # in small groups, as people arrive
        await asyncio.gather(*(t.open() for t in tabs[i:i + 16]))


async def drive(stack: Stack, users: int, messages: int, timeout: float, warmup: int,
                meter: CpuMeter) -> tuple[list[Outcome], float, list[float], list[float], Cpu]:
    """Warm-up (not counted), then *users* tabs each sending *messages*, one at a time."""
    warm = _users(stack.front, warmup, 200)
    await _open(warm)
    try:
        await asyncio.gather(*(t.ask(3000 + i, timeout) for i, t in enumerate(warm)))
    finally:
        await asyncio.gather(*(t.close() for t in warm), return_exceptions=True)

    tabs = _users(stack.front, users, 40)
    await _open(tabs)
    vllm_before = await asyncio.to_thread(lambda: [up.served(p) for p in stack.vllm_ports])
    app_before = await asyncio.to_thread(lambda: [up.translated(p) for p in stack.app_ports])

    async def user(u: int, tab: Browser) -> list[Outcome]:
        return [await tab.ask(FIRST + u * messages + r, timeout) for r in range(messages)]

    try:
        meter.start()
        start = time.perf_counter()
        outcomes = await asyncio.gather(*(user(u, t) for u, t in enumerate(tabs)))
        wall = time.perf_counter() - start
        cpu = meter.stop()
    finally:
        await asyncio.gather(*(t.close() for t in tabs), return_exceptions=True)
    # The counters are read after the answers arrived: the app counts before it sends.
    by_vllm = [up.served(p) - b for p, b in zip(stack.vllm_ports, vllm_before, strict=True)]
    by_app = [up.translated(p) - b for p, b in zip(stack.app_ports, app_before, strict=True)]
    return [o for per_user in outcomes for o in per_user], wall, by_vllm, by_app, cpu


def run_shape(shape: Shape, args: argparse.Namespace, tmp: Path) -> Result:
    """Start ``up`` for *shape*, drive the users, stop it."""
    cache = up.private_cache(tmp / f"cache-{shape.replicas}x{shape.apps}")
    # Router, replicas, router metrics / app (or proxy), replicas, Redis: blocks of N + 2.
    model_port = up.free_block(shape.replicas + 2)
    app_port = up.free_block(shape.apps + 2)  # reserved: never inside the first block
    args_up = ["--replicas", str(shape.replicas), "--app-replicas", str(shape.apps), "--port",
               str(model_port), "--app-port", str(app_port)]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = up.up_env(cache, HYMT_VLLM_ARGS=args.vllm_args, HYMT_TRUSTED_PROXIES="127.0.0.1",
                    PYTHONPATH=path, HYMT_MEMORY="false")  # every message to the model
    if shape.replicas == 1:
        vllm_ports = [model_port]
    else:
        vllm_ports = [model_port + 1 + i for i in range(shape.replicas)]
    app_ports = [app_port] if shape.apps == 1 else [app_port + 1 + i for i in range(shape.apps)]
    stack = Stack(f"http://127.0.0.1:{app_port}", vllm_ports, app_ports, model_port, cache)
    log = tmp / f"up-{shape.replicas}x{shape.apps}.log"
    print(f"# {shape.label}: HYMT_VLLM_ARGS={shlex.quote(args.vllm_args)} "
          f"-m hymt_chat.cli.main {shlex.join(['up', *args_up])}", flush=True)
    free = psutil.virtual_memory().available / 2**30
    if free < REPLICA_GIB * shape.replicas:  # a replica killed for memory dies as EngineDead
        print(f"#   warning: {free:.1f} GiB of memory available; {shape.replicas} demo "
              f"replica(s) take about {REPLICA_GIB * shape.replicas} GiB", flush=True)
    began = time.monotonic()
    process = up.start_up(args_up, env, log)
    try:
        up.wait_for(lambda: b"model ready at" in log.read_bytes(), 1200, "the model",
                    process=process, log=log, every=0.5)
        up.wait_for(lambda: all(up.answers(f"http://127.0.0.1:{p}/health") for p in app_ports),
                    1200, "every app replica's /health", process=process, log=log, every=0.5)
        ready_s = time.monotonic() - began
        print(f"#   ready after {ready_s:.0f} s; driving {args.users} users × "
              f"{args.messages} messages", flush=True)
        outcomes, wall, by_vllm, by_app, cpu = asyncio.run(
            drive(stack, args.users, args.messages, args.timeout, args.warmup,
                  CpuMeter(process.pid)))
        measured_hops = hops(stack)
    except BaseException:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        up.stop_up(process, 120)
    return Result(shape, shlex.join(["up", *args_up]), ready_s, outcomes, wall, by_vllm, by_app,
                  cpu, measured_hops)


_CORES = psutil.cpu_count() or 1


def _per(result: Result, part: str) -> str:
    return f"{result.per_message(part) * 1000:.0f} ms"


def _split(values: list[float]) -> str:
    total = sum(values)
    parts = " / ".join(f"{v:.0f}" for v in values)
    if len(values) < 2 or total <= 0:
        return parts
    return f"{parts} ({' / '.join(f'{v / total:.0%}' for v in values)})"


def _ratio(a: float, b: float) -> str:
    return f"{b / a:.2f}" if a and not math.isnan(a) and not math.isnan(b) else "—"


def table(one: Result, two: Result) -> str:
    """A Markdown table: one row per figure, a column per configuration, and the ratio."""
    rows = [
        ("all answered", *(f"{'yes' if r.count('answered') == len(r.outcomes) else 'NO'} "
                           f"({r.count('answered')}/{len(r.outcomes)})" for r in (one, two)), ""),
        ("wall time", f"{one.wall:.1f} s", f"{two.wall:.1f} s", _ratio(one.wall, two.wall)),
        ("messages/s", f"{one.rate:.2f}", f"{two.rate:.2f}", _ratio(one.rate, two.rate)),
        ("P50 latency", f"{one.pct(50):.1f} s", f"{two.pct(50):.1f} s",
         _ratio(one.pct(50), two.pct(50))),
        ("P95 latency", f"{one.pct(95):.1f} s", f"{two.pct(95):.1f} s",
         _ratio(one.pct(95), two.pct(95))),
        ("requests per vLLM replica", _split(one.by_vllm), _split(two.by_vllm),
         _ratio(sum(one.by_vllm), sum(two.by_vllm))),
        ("answers per app replica", _split(one.by_app), _split(two.by_app),
         _ratio(sum(one.by_app), sum(two.by_app))),
        *((f"CPU of {part} per message", _per(one, part), _per(two, part),
           _ratio(one.per_message(part), two.per_message(part))) for part in PARTS),
        ("CPU of the clients, of others", *(
            f"{r.cpu.clients:.1f} s, {r.cpu.others:.0f} s of {_CORES * r.cpu.seconds:.0f} s"
            for r in (one, two)), ""),
        *((f"a GET through {hop.name} (idle, median)", "—",
           f"+{hop.via_ms - hop.direct_ms:.1f} ms ({hop.direct_ms:.1f} → {hop.via_ms:.1f})", "")
          for hop in two.hops),
        ("start-up until ready", f"{one.ready_s:.0f} s", f"{two.ready_s:.0f} s",
         _ratio(one.ready_s, two.ready_s)),
    ]
    for state in ("untranslated", "refused", "lost"):
        if one.count(state) or two.count(state):
            rows.append((state, str(one.count(state)), str(two.count(state)), ""))
    head = f"| | {one.shape.label} | {two.shape.label} | 2×2 ÷ 1×1 |\n|---|---:|---:|---:|"
    return "\n".join([head, *(f"| {' | '.join(r)} |" for r in rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=40, help="websocket users (default 40)")
    parser.add_argument("--messages", type=int, default=2,
                        help="messages per user, one after the other (default 2)")
    parser.add_argument("--warmup", type=int, default=4,
                        help="users sending one message each before the count (default 4)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds a message may wait for its answer (default 600)")
    parser.add_argument("--vllm-args", default=VLLM_ARGS,
                        help=f"HYMT_VLLM_ARGS for both configurations (default {VLLM_ARGS!r})")
    args = parser.parse_args()
    if args.users < 1 or args.messages < 1 or args.users * args.messages > 9999 - FIRST:
        parser.error(f"--users and --messages are 1 or more, at most {9999 - FIRST} messages")

    began = dt.datetime.now(dt.UTC)
    host = machine()
    with tempfile.TemporaryDirectory(prefix="hymt-scale-") as tmp:
        one = run_shape(Shape(1, 1), args, Path(tmp))
        two = run_shape(Shape(2, 2), args, Path(tmp))
    minutes = (dt.datetime.now(dt.UTC) - began).total_seconds() / 60
    command = " ".join(["PYTHONPATH=. .venv/bin/python benchmarks/scale_out.py",
                        *(shlex.quote(a) for a in sys.argv[1:])])
    report = "\n\n".join([
        "# Scale-out benchmark",
        (f"{args.users} websocket users × {args.messages} messages "
         f"(\"{SENTENCE.format('N')}\" → English), HYMT_VLLM_ARGS=\"{args.vllm_args}\"; "
         f"{args.warmup} warm-up messages per configuration not counted."),
        table(one, two),
        ("Both vLLM replicas share this machine's cores: the 2×2 column adds no compute, "
         "so its messages/s ratio is not a scaling result but what the second engine, app, "
         "router, proxy and Redis cost on the same cores. The spread rows show how the "
         "router and the proxy divided the work. The hops' own share is the \"router, proxy, "
         "Redis\" CPU and the GET rows (one request on the idle stack, straight to a replica "
         "or app, and through vllm-router or HAProxy). vLLM's CPU threads spin while they "
         "wait, so its CPU per message follows the wall time. \"Others\" is CPU used outside "
         "this benchmark and its stack during the drive, of the cores × wall time the "
         "machine had."),
        f"Run: `{command}`",
        (f"Started as `hymt-chat {one.command}`, then `hymt-chat {two.command}` (free ports, "
         "a private cache folder each, HYMT_TRUSTED_PROXIES=127.0.0.1, the default rate "
         "limits per user).  \n"
         f"Date: {began:%Y-%m-%d %H:%M} UTC; the whole run took {minutes:.1f} min.  \n"
         f"Machine: {host}, at the end {os.getloadavg()[0]:.2f}."),
    ]) + "\n"
    print("\n" + report, end="")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale_out.md").write_text(report)
    print(f"(written to {RESULTS / 'scale_out.md'})")

if __name__ == "__main__":
    main()
