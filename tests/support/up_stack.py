"""``hymt-chat up`` started the way an operator would, for the scale-out test and benchmark.

One runner for both: a private cache folder whose ``models`` links the demo model that setup
prepared, blocks of free ports (``up`` puts the replicas on the ports after the one given),
the ``up`` subprocess and its stop, and the counters its processes publish.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from hymt_chat.settings import Settings
from tests.support.ports import free_block

__all__ = ["ROOT", "answers", "free_block", "private_cache", "running", "served", "start_up",
           "stop_up", "translated", "up_env", "wait_for"]

ROOT = Path(__file__).resolve().parents[2]


def private_cache(folder: Path) -> Path:
    """*folder* as a cache folder of its own (its state files, logs, keys) whose ``models``
    links the demo model of the user's cache: no second copy, no download."""
    (folder / "models").mkdir(parents=True)
    for model in (Settings().cache_dir / "models").iterdir():
        (folder / "models" / model.name).symlink_to(model)
    return folder


def up_env(cache: Path, **settings: str) -> dict[str, str]:
    """This environment without the caller's own HYMT_/CHAINLIT_ settings, with *cache*, no
    agents (sign-in off), and *settings* on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYMT_", "CHAINLIT_"))}
    env.update(HYMT_CACHE_DIR=str(cache), HYMT_AGENTS="", **settings)
    return env


def start_up(args: Sequence[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m hymt_chat.cli.main up *args*`` in its own session, its output in *log*."""
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "hymt_chat.cli.main", "up", *args],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def wait_for(ready: Callable[[], bool], timeout: float, what: str, *,
             process: subprocess.Popen[bytes] | None = None, log: Path | None = None,
             every: float = 1.0) -> None:
    """Poll *ready*; AssertionError (with the end of *log*) when *process* (``up``) exits or
    *timeout* seconds pass first."""
    def tail() -> str:
        return ":\n" + log.read_text(errors="replace")[-3000:] if log is not None else ""

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"up exited ({process.returncode}) waiting for {what}{tail()}")
        if ready():
            return
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}{tail()}")


def stop_up(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """SIGTERM to ``up`` (it stops its children); False when it had to be killed (its process
    group) after *timeout* seconds."""
    if process.poll() is not None:
        return True
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return False


def answers(url: str) -> bool:
    """A GET of *url* answers 200."""
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _scrape(port: int, pattern: str) -> float:
    """The sum of the values *pattern* (one group) finds in the /metrics of the server on
    *port*, over its label sets."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    return sum(float(m) for m in re.findall(pattern, text, re.MULTILINE))


def served(port: int) -> float:
    """Requests a vLLM server finished: its own ``vllm:request_success_total``."""
    return _scrape(port, r"^vllm:request_success_total\{[^}]*\} ([0-9.e+]+)$")


def running(port: int) -> float:
    """Requests a vLLM server is generating now."""
    return _scrape(port, r"^vllm:num_requests_running\{[^}]*\} ([0-9.e+]+)$")


def translated(port: int) -> float:
    """Translations an app process answered (its /metrics: local callers need no token)."""
    return _scrape(port, r'^hymt_translations_total\{outcome="ok"[^}]*\} ([0-9.e+]+)$')
