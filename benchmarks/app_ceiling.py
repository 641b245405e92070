"""How many messages/s one app process carries when the model is not the limit.

The real app (``chainlit run app.py``) sits in front of a stand-in OpenAI-compatible model that
answers at once (``tests/support/stub_model.py`` in its own process — the one fake here: it
measures the app, not a model). N websocket clients like browser tabs (socket.io at
``/ws/socket.io``) each send a French sentence, wait for its translation, and send the next.
Beside it, in the same run, a raw ``openai`` client with N concurrent calls against the same
stand-in: the ratio app/raw says how much of the stand-in's pace the app keeps.

    PYTHONPATH=. .venv/bin/python benchmarks/app_ceiling.py [--seconds 8] [--sessions 1 8 32 128]
        [--profile app.svg]   # py-spy flame graph of the app (.svg; else collapsed stacks)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx
import openai
import socketio

from tests.support.chainlit_app import app_env, running_app

SENTENCE = "Bonjour, je voudrais réserver une table pour deux personnes ce soir, merci {}."


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


@dataclass
class Level:
    sessions: int
    done: int
    seconds: float
    latencies: list[float]
    lost: int = 0

    @property
    def rate(self) -> float:
        return self.done / self.seconds

    def pct(self, q: float) -> float:
        if len(self.latencies) < 2:
            return self.latencies[0] if self.latencies else float("nan")
        return statistics.quantiles(self.latencies, n=100)[int(q) - 1]


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
                                  transports=["websocket"],
                                  auth={"sessionId": str(uuid.uuid4()), "clientType": "webapp",
                                        "userEnv": "{}"})
        await self.client.emit("connection_successful")

    async def ask(self, n: int) -> float | None:
        """Seconds until the answer arrived; None when it did not within 30 s (lost)."""
        text = SENTENCE.format(n)
        fut = asyncio.get_running_loop().create_future()
        self.waiting["EN:" + text] = fut
        start = time.perf_counter()
        await self.client.emit("client_message", {"message": {
            "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
            "output": text, "createdAt": "2026-01-01T00:00:00Z"}, "fileReferences": None})
        try:
            await asyncio.wait_for(fut, 30)
        except TimeoutError:
            return None
        finally:
            del self.waiting["EN:" + text]
        return time.perf_counter() - start


async def _drive(workers: list, call, seconds: float, warmup: float) -> Level:
    """Each worker loops ``call(worker, n)``; count what finished within the timed window
    (whenever it started: at 128 sessions a second-long answer is most of a short window)."""
    latencies: list[float] = []
    lost = 0
    counter = iter(range(10**9))
    t0 = time.perf_counter()
    start, stop = t0 + warmup, t0 + warmup + seconds

    async def loop(worker) -> None:
        nonlocal lost
        while time.perf_counter() < stop:
            took = await call(worker, next(counter))
            if took is None:
                lost += 1
            elif start <= time.perf_counter() <= stop:  # finished in the window: counted
                latencies.append(took)

    await asyncio.gather(*(loop(w) for w in workers))
    return Level(len(workers), len(latencies), seconds, latencies, lost)


async def app_level(url: str, sessions: int, seconds: float, warmup: float) -> Level:
    tabs = [Browser(url) for _ in range(sessions)]
    for i in range(0, sessions, 16):  # open in small groups, as people arrive
        await asyncio.gather(*(t.open() for t in tabs[i:i + 16]))
    # Their welcome (pickers, commands) and a first message each are not part of the count.
    await asyncio.gather(*(t.ask(-1 - i) for i, t in enumerate(tabs)))
    try:
        return await _drive(tabs, lambda tab, n: tab.ask(n), seconds, warmup)
    finally:
        await asyncio.gather(*(t.client.disconnect() for t in tabs), return_exceptions=True)


async def raw_level(base_url: str, sessions: int, seconds: float, warmup: float) -> Level:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)

    async def call(_: object, n: int) -> float:
        began = time.perf_counter()
        await client.chat.completions.create(model="stub", messages=[
            {"role": "user", "content": "Translate into English.\n\n" + SENTENCE.format(n)}],
            max_tokens=64)
        return time.perf_counter() - began

    try:
        return await _drive(list(range(sessions)), call, seconds, warmup)
    finally:
        await client.close()


def _row(level: Level, raw: Level) -> str:
    return (f"{level.sessions:>8} {level.rate:>9.1f} {raw.rate:>9.1f} "
            f"{level.rate / raw.rate:>6.2f} {level.pct(50) * 1000:>8.1f} "
            f"{level.pct(95) * 1000:>8.1f} {raw.pct(50) * 1000:>8.1f} {level.lost:>5}")


async def run(url: str, base_url: str, levels: list[int], seconds: float) -> None:
    print(f"{'sessions':>8} {'app msg/s':>9} {'raw req/s':>9} {'ratio':>6} "
          f"{'P50 ms':>8} {'P95 ms':>8} {'raw P50':>8} {'lost':>5}", flush=True)
    for sessions in levels:
        level = await app_level(url, sessions, seconds, warmup=1.0)
        raw = await raw_level(base_url, sessions, seconds, warmup=1.0)
        print(_row(level, raw), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--profile", help="write a py-spy flame graph of the app here")
    args = parser.parse_args()

    stub_port = _free_port()
    stub = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "_instant_model.py"),
                             str(stub_port)])
    base_url = f"http://127.0.0.1:{stub_port}/v1"
    try:
        _wait_for(base_url.removesuffix("/v1") + "/health")
        _measure(args, base_url)
    finally:
        stub.terminate()
        stub.wait()


def _measure(args: argparse.Namespace, base_url: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = app_env(HYMT_BASE_URL=base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CACHE_DIR=str(Path(tmp) / "cache"), HYMT_PORT=str(_free_port()),
                      HYMT_RATE_LIMIT="", HYMT_RATE_LIMIT_CHARS="", HYMT_AGENTS="",
                      HYMT_MEMORY="false",  # every message to the model (memory: memory.py)
                      HYMT_LOG_LEVEL=os.environ.get("HYMT_LOG_LEVEL", "WARNING"))
        env.pop("CHAINLIT_AUTH_SECRET", None)
        with running_app(env, _free_port(), Path(tmp) / "app.log") as url:
            spy = None
            if args.profile:
                pid = int(subprocess.check_output(
                    ["pgrep", "-f", f"chainlit run {ROOT / 'app.py'} .*--port {url.rsplit(':', 1)[1]}"]
                ).split()[0])
                spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record",
                                        "--pid", str(pid), "-o", args.profile, "--nonblocking",
                                        "--format", "flamegraph" if args.profile.endswith(".svg")
                                        else "raw"])
            try:
                asyncio.run(run(url, base_url, args.sessions, args.seconds))
            finally:
                if spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(timeout=60)


if __name__ == "__main__":
    main()
