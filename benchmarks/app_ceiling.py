"""How many messages/s one app process carries when the model is not the limit, and what one
message costs it in CPU.

The real app (``chainlit run app.py``) sits in front of a stand-in OpenAI-compatible model that
answers at once (``benchmarks/_instant_model.py`` in its own process — the one fake here: it
measures the app, not a model; it answers the sentence in English, so no check asks for a
repair). N websocket clients like browser tabs (socket.io at ``/ws/socket.io``) each send a
French sentence, wait for its translation, and send the next.

The clients run in processes of their own (``--clients``), and where the machine has more than
one core the app is pinned to its own (``--app-cores``, default core 0) and the clients and the
stand-in to the others, so that they do not take the app's CPU. Each level reports, over the
same timed window: the app's messages/s, P50/P95, the app process's own CPU time per message
(``/proc/<pid>/stat``: user + system, all its threads), and the clients' and the stand-in's
CPU as a share of their cores (near 100 %: the client is what limits, not the app). Then, in
the same run, a raw ``openai`` client with N concurrent calls against the same stand-in.

    PYTHONPATH=. .venv/bin/python benchmarks/app_ceiling.py [--seconds 8]
        [--sessions 8 32 128 512] [--clients 1]
        [--profile DIR]   # py-spy of the app over each timed window: DIR/app-<N>.txt
                          # (collapsed stacks) and the CPU µs per message per stage (_stages.py)
        [--against DIR]   # and another checkout's app (DIR: its root, e.g. a git worktree
                          # of main) at the same time, on the same cores, clients of its own

``--against`` is for comparing two builds: on a shared virtual machine the same build's CPU per
message moved by a third between runs a minute apart (docs/measured.md), more than most
changes; two apps loaded in the same window on the same core are slowed alike, so the ratio of
their CPU per message is read from one run. Each app then has about half of the core.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY_SPY = Path(sys.executable).with_name("py-spy")
sys.path.insert(0, str(ROOT))

import httpx
import openai
import psutil
import socketio
from _instant_model import ENGLISH, FRENCH
from _stages import stage_table

from tests.support.chainlit_app import app_env, running_app

TIMEOUT = 30.0  # seconds a message may take before it counts as lost


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the clients (each client process runs one of these) -------------------------------------

class Browser:
    """One tab: a socket.io session that sends a message and waits for its answer."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = socketio.AsyncClient()
        self.waiting: dict[str, asyncio.Future[None]] = {}

        @self.client.on("new_message")
        async def new_message(data: dict) -> None:
            output = data.get("output") or ""
            for token, fut in list(self.waiting.items()):
                if token in output and not fut.done():
                    fut.set_result(None)

    async def open(self) -> None:
        await self.client.connect(self.url, socketio_path="/ws/socket.io",
                                  transports=["websocket"], wait_timeout=30,
                                  auth={"sessionId": str(uuid.uuid4()), "clientType": "webapp",
                                        "userEnv": "{}"})
        await self.client.emit("connection_successful")

    async def ask(self, n: str) -> float | None:
        """Seconds until the answer arrived; None when it did not within TIMEOUT (lost)."""
        token = f"{ENGLISH}{n}."
        fut = asyncio.get_running_loop().create_future()
        self.waiting[token] = fut
        start = time.perf_counter()
        await self.client.emit("client_message", {"message": {
            "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
            "output": f"{FRENCH}{n}.", "createdAt": "2026-01-01T00:00:00Z"},
            "fileReferences": None})
        try:
            await asyncio.wait_for(fut, TIMEOUT)
        except TimeoutError:
            return None
        finally:
            del self.waiting[token]
        return time.perf_counter() - start


@dataclass
class Window:
    """What one client process saw in the timed window."""

    latencies: list[float] = field(default_factory=list)
    lost: int = 0
    cpu: float = 0.0  # this process's CPU seconds over the window


async def _drive(workers: list, call: Callable[[object, str], Awaitable[float | None]],
                 start: float, stop: float, prefix: str) -> Window:
    """Each worker loops ``call(worker, id)``; count what finished within [start, stop] (wall
    clock, the same in every process), whenever it started."""
    out = Window()
    counter = iter(range(10**9))

    async def loop(worker: object) -> None:
        while time.time() < stop:
            took = await call(worker, f"{prefix}-{next(counter)}")
            if took is None:
                out.lost += 1
            elif start <= time.time() <= stop:
                out.latencies.append(took)

    async def clock() -> None:
        await asyncio.sleep(max(0.0, start - time.time()))
        began = time.process_time()
        await asyncio.sleep(max(0.0, stop - time.time()))
        out.cpu = time.process_time() - began

    await asyncio.gather(clock(), *(loop(w) for w in workers))
    return out


async def _app_client(url: str, sessions: int, seconds: float, conn: Connection,
                      prefix: str) -> Window:
    tabs = [Browser(url) for _ in range(sessions)]
    try:
        for i in range(0, sessions, 16):  # open in small groups, as people arrive
            await asyncio.gather(*(t.open() for t in tabs[i:i + 16]))
        # Their welcome (pickers, commands) and a first message each are not part of the count.
        await asyncio.gather(*(t.ask(f"{prefix}-w{i}") for i, t in enumerate(tabs)))
        start = await _ready(conn)
        return await _drive(tabs, lambda tab, n: tab.ask(n), start, start + seconds, prefix)
    finally:
        await asyncio.gather(*(t.client.disconnect() for t in tabs), return_exceptions=True)


async def _raw_client(base_url: str, sessions: int, seconds: float, conn: Connection,
                      prefix: str) -> Window:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=TIMEOUT)

    async def call(_: object, n: str) -> float | None:
        began = time.perf_counter()
        try:
            await client.chat.completions.create(model="stub", messages=[
                {"role": "user", "content": f"Translate into English.\n\n{FRENCH}{n}."}],
                max_tokens=64)
        except openai.APIError:
            return None
        return time.perf_counter() - began

    try:
        await asyncio.gather(*(call(None, f"{prefix}-w{i}") for i in range(sessions)))
        start = await _ready(conn)
        return await _drive(list(range(sessions)), call, start, start + seconds, prefix)
    finally:
        await client.close()


async def _ready(conn: Connection) -> float:
    """Say this client is ready; the window's start time comes back once all of them are."""
    conn.send("ready")
    return await asyncio.to_thread(conn.recv)


def client_process(kind: str, url: str, sessions: int, seconds: float, conn: Connection,
                   prefix: str) -> None:
    """A client process's body (multiprocessing): one level's sessions, its Window sent back."""
    run = _app_client if kind == "app" else _raw_client
    conn.send(asyncio.run(run(url, sessions, seconds, conn, prefix)))


# --- the conductor ----------------------------------------------------------------------------

@dataclass
class Level:
    sessions: int
    seconds: float
    latencies: list[float]
    lost: int
    client_cpu: float  # the client processes' CPU seconds over the window, all together
    app_cpu: float = 0.0  # the app process's CPU seconds over the window
    stub_cpu: float = 0.0  # the stand-in's

    @property
    def done(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.done / self.seconds

    def pct(self, q: int) -> float:
        if len(self.latencies) < 2:
            return self.latencies[0] if self.latencies else float("nan")
        return statistics.quantiles(self.latencies, n=100)[q - 1]


@dataclass
class Target:
    """An app under load: its page's URL and its process."""

    name: str
    url: str
    app: psutil.Process


@dataclass
class Bench:
    targets: list[Target]  # this checkout's app first; with --against, the other's
    base_url: str
    stub: psutil.Process
    seconds: float
    clients: int
    client_cores: int  # cores the clients and the stand-in share
    profile: Path | None = None
    py_spy: Path = PY_SPY

    def level(self, kind: str, sessions: int) -> list[Level]:
        """One level: client processes started (*sessions* for each app, or for the raw
        client), all ready, one timed window, each target's results."""
        ctx = mp.get_context("spawn")
        shares = [sessions // self.clients + (i < sessions % self.clients)
                  for i in range(self.clients)]
        urls = [t.url for t in self.targets] if kind == "app" else [self.base_url]
        pipes: list[list[Connection]] = [[] for _ in urls]
        procs = []
        for t, url in enumerate(urls):
            for i, share in enumerate(s for s in shares if s):
                mine, theirs = ctx.Pipe()
                proc = ctx.Process(target=client_process, daemon=True, args=(
                    kind, url, share, self.seconds, theirs, f"{kind}{sessions}t{t}c{i}"))
                proc.start()
                theirs.close()  # a client that dies ends the pipe: recv() raises, nothing hangs
                pipes[t].append(mine)
                procs.append(proc)
        apps = [t.app for t in self.targets] if kind == "app" else []
        every = [pipe for group in pipes for pipe in group]
        try:
            for pipe in every:
                if pipe.recv() != "ready":
                    raise RuntimeError("a client process failed")
            spy = self._spy(sessions) if kind == "app" and self.profile else None
            start = time.time() + 1.0  # a second of warm-up at full load, not counted
            for pipe in every:
                pipe.send(start)
            time.sleep(max(0.0, start - time.time()))
            app0, stub0 = [_cpu(a) for a in apps], _cpu(self.stub)
            time.sleep(max(0.0, start + self.seconds - time.time()))
            app_cpu = [_cpu(a) - c for a, c in zip(apps, app0, strict=True)] or [0.0]
            stub_cpu = _cpu(self.stub) - stub0
            if spy is not None:
                spy.send_signal(signal.SIGINT)
            windows = [[pipe.recv() for pipe in group] for group in pipes]
            if spy is not None:
                spy.wait(timeout=60)
        finally:
            for proc in procs:
                proc.join(timeout=TIMEOUT + 10)
                if proc.is_alive():
                    proc.kill()
        return [Level(sessions, self.seconds, [x for w in group for x in w.latencies],
                      sum(w.lost for w in group), sum(w.cpu for w in group), cpu, stub_cpu)
                for group, cpu in zip(windows, app_cpu, strict=True)]

    def _spy(self, sessions: int) -> subprocess.Popen[bytes]:
        assert self.profile is not None
        out = self.profile / f"app-{sessions}.txt"
        # From now to the window's end: the warm-up second, then the window itself.
        return subprocess.Popen([str(self.py_spy), "record", "--pid", str(self.targets[0].app.pid),
                                 "--nonblocking", "--gil", "--rate", "200", "--format", "raw",
                                 "-o", str(out)], stdout=subprocess.DEVNULL)

    def run(self, levels: list[int]) -> None:
        print(f"{'sessions':>8} {'msg/s':>7} {'P50 ms':>7} {'P95 ms':>7} {'lost':>4} "
              f"{'app CPU/msg':>11} {'app CPU':>7} {'client CPU':>10} {'stub CPU':>8} "
              f"{'raw req/s':>9} {'raw P50':>7} {'raw client':>10} {'ratio':>5}", flush=True)
        for sessions in levels:
            app, *others = self.level("app", sessions)
            raw, = self.level("raw", sessions)
            print(self._row(app, raw), flush=True)
            for target, other in zip(self.targets[1:], others, strict=True):
                print(f"{self._row(other, raw, 'against')}  {target.name}", flush=True)
                print(f"{'':>8} this app's CPU per message / the other's, same window: "
                      f"{_per_msg(app) / _per_msg(other):.3f}", flush=True)
            if self.profile:
                table = stage_table((self.profile / f"app-{sessions}.txt").read_text(),
                                    app.app_cpu / max(1, app.done))
                (self.profile / f"stages-{sessions}.md").write_text(table)
                print(table, flush=True)

    def _row(self, app: Level, raw: Level, label: str = "") -> str:
        """One level's line; *label* in the sessions column (another app's line under it)."""
        def share(cpu: float, cores: int) -> str:  # of the cores it may use
            return f"{100 * cpu / app.seconds / cores:.0f} %"
        per_msg = _per_msg(app) * 1000
        return (f"{label or app.sessions:>8} {app.rate:>7.1f} {app.pct(50) * 1000:>7.1f} "
                f"{app.pct(95) * 1000:>7.1f} {app.lost:>4} {per_msg:>8.2f} ms "
                f"{share(app.app_cpu, 1):>7} {share(app.client_cpu, self.client_cores):>10} "
                f"{share(app.stub_cpu, self.client_cores):>8} {raw.rate:>9.1f} "
                f"{raw.pct(50) * 1000:>7.1f} {share(raw.client_cpu, self.client_cores):>10} "
                f"{app.rate / raw.rate if raw.rate else float('nan'):>5.2f}")


def _per_msg(level: Level) -> float:
    return level.app_cpu / max(1, level.done)


def _cpu(proc: psutil.Process) -> float:
    """A process's own CPU seconds so far (user + system, all threads: /proc/<pid>/stat)."""
    times = proc.cpu_times()
    return times.user + times.system


def _app_pid(port: str, root: Path = ROOT) -> int:
    return int(subprocess.check_output(
        ["pgrep", "-f", f"chainlit run {root / 'app.py'} .*--port {port}$"]).split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--sessions", type=int, nargs="+", default=[8, 32, 128, 512])
    parser.add_argument("--clients", type=int, help="client processes (default: one per core "
                        "not given to the app)")
    parser.add_argument("--app-cores", type=int, nargs="+", default=[0],
                        help="the app's cores (the rest: clients and stand-in)")
    parser.add_argument("--profile", type=Path, help="py-spy the app into this folder")
    parser.add_argument("--against", type=Path, help="another checkout's root: its app too, "
                        "in the same windows, on the same cores")
    args = parser.parse_args()

    cores = os.sched_getaffinity(0)
    app_cores = set(args.app_cores) & cores
    rest = cores - app_cores
    if not app_cores or not rest:  # one core: nothing to pin apart
        app_cores = rest = cores
    pinned = app_cores != rest
    clients = args.clients or len(rest)
    print(f"cores: app {sorted(app_cores)}, clients and stand-in {sorted(rest)}"
          f"{'' if pinned else ' (not pinned: one core)'}; {clients} client process(es); "
          f"load average {_load()}", flush=True)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)

    os.sched_setaffinity(0, rest)  # the stand-in, the clients and py-spy inherit these
    stub_port = _free_port()
    base_url = f"http://127.0.0.1:{stub_port}/v1"
    with (tempfile.TemporaryDirectory() as tmp,
          open(Path(tmp) / "stand-in.log", "wb") as stub_log):
        # Its log has a traceback per call still open when a level's tabs close: kept apart.
        stub = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "_instant_model.py"),
                                 str(stub_port)], stdout=stub_log, stderr=subprocess.STDOUT)
        try:
            _wait_for(base_url.removesuffix("/v1") + "/health")
            env = app_env(HYMT_BASE_URL=base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                          # Every tab is 127.0.0.1, one user to the limits: the default 4,000
                          # model calls an hour ran out inside the 128-session level (every
                          # tab's last message refused: the "lost 128" of session 11).
                          HYMT_RATE_LIMIT="", HYMT_RATE_LIMIT_CHARS="", HYMT_RATE_LIMIT_CALLS="",
                          HYMT_AGENTS="",
                          HYMT_MEMORY="false",  # every message to the model (memory: memory.py)
                          # The window one H200 gives (the h200 profile's --max-num-seqs): the
                          # stand-in has no /metrics, and the safe default of 2 would queue
                          # every level above 2 in the app's fair queue, not at the model.
                          HYMT_WINDOW_MAX="128")
            env.pop("CHAINLIT_AUTH_SECRET", None)
            os.sched_setaffinity(0, app_cores)  # the apps inherit their cores
            with contextlib.ExitStack() as apps:
                roots = [ROOT, *([args.against.resolve()] if args.against else [])]
                targets = [_start(apps, root, env, Path(tmp) / f"app{i}")
                           for i, root in enumerate(roots)]
                os.sched_setaffinity(0, rest)
                bench = Bench(targets, base_url, psutil.Process(stub.pid), args.seconds,
                              clients, len(rest), args.profile)
                bench.run(args.sessions)
        finally:
            stub.terminate()
            stub.wait()
            print(f"load average {_load()}", flush=True)


def _start(apps: contextlib.ExitStack, root: Path, env: dict[str, str], folder: Path) -> Target:
    """The app of the checkout at *root*: its own code (PYTHONPATH), its own Chainlit config and
    page (CHAINLIT_APP_ROOT), its own cache (in *folder*) and port."""
    port = _free_port()
    folder.mkdir()
    own = {**env, "HYMT_CACHE_DIR": str(folder / "cache"), "HYMT_PORT": str(port)}
    if root != ROOT:
        own |= {"PYTHONPATH": str(root), "CHAINLIT_APP_ROOT": str(root)}
    url = apps.enter_context(running_app(own, port, folder / "app.log", app=root / "app.py"))
    return Target(str(root), url, psutil.Process(_app_pid(str(port), root)))


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
