"""A real, throwaway Redis (Debian's ``redis-server``) on a free port, for tests of shared state."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from tests.conftest import free_port


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Yield ``redis://127.0.0.1:PORT/0`` once it answers PING; stop it afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is missing: run scripts/setup.sh --test")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=open(folder / "redis.log", "wb"), stderr=subprocess.STDOUT)  # noqa: SIM115
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if redis.Redis.from_url(url).ping():
                    break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((folder / "redis.log").read_text()) from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
