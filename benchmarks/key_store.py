"""API key store benchmark: what the keys cost an API request, on SQLite and on PostgreSQL.

Per API request the store is asked twice (look the key up, charge the characters). Measured:

* **one request's store calls**: ``lookup`` + ``charge`` back to back in one thread, P50/P95;
* **through the event loop**: ``Access.authenticate`` + ``Access.admit`` (each in a worker
  thread, as the API runs them) from ``--tasks`` coroutines at once, requests/s;
* **two replicas**: two processes, 8 threads each, charging one key at once, charges/s (and
  the quota checked: exactly as many admitted as fit).

    .venv/bin/python benchmarks/key_store.py [--requests 2000] [--tasks 16]

PostgreSQL: HYMT_TEST_POSTGRES_URL, else a throwaway cluster (initdb, as the tests do), on this
host over TCP loopback. Writes docs/results/key_store.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hymt_chat.api.access import Access
from hymt_chat.api.keys import KeyStore
from hymt_chat.errors import QuotaExceededError
from tests.support.postgres import fresh_database, postgres_server

RESULTS = ROOT / "docs" / "results" / "key_store.md"


def one_request_ms(store: KeyStore, key: str, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        store.lookup(key)
        store.charge("bench", 10, None)
        times.append((time.perf_counter() - t0) * 1000)
    q = statistics.quantiles(times, n=20)
    return statistics.median(times), q[18]


async def through_the_loop(store: KeyStore, key: str, n: int, tasks: int) -> float:
    access = Access(store, open_local=False, local_limit="")
    left = [n]

    async def client() -> None:
        while left[0] > 0:
            left[0] -= 1
            caller = await access.authenticate(key, "10.0.0.1")
            await access.admit(caller, 10)

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(tasks)))
    return n / (time.perf_counter() - t0)


def replica(where: Path | str, per_thread: int, start: Any, out: Any) -> None:
    store = KeyStore(where)

    def burst(_: int) -> int:
        ok = 0
        for _ in range(per_thread):
            try:
                store.charge("race", 7, 7 * per_thread * 8)  # room for half of all charges
                ok += 1
            except QuotaExceededError:
                pass
        return ok

    start.wait()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        admitted = sum(pool.map(burst, range(8)))
    out.put((admitted, time.perf_counter() - t0))


def two_replicas(where: Path | str, per_thread: int) -> tuple[float, int]:
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=replica, args=(where, per_thread, start, out)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return 2 * 8 * per_thread / max(s for _, s in got), sum(a for a, _ in got)


def bench(name: str, where: Path | str, args: argparse.Namespace) -> str:
    store = KeyStore(where)
    key = store.create("bench", per_minute=10**6)
    one_request_ms(store, key, 50)  # warm: connections in the pool, statements compiled
    p50, p95 = one_request_ms(store, key, args.requests)
    rate = asyncio.run(through_the_loop(store, key, args.requests, args.tasks))
    store.close()
    per_thread = max(1, args.requests // 16)
    charges, admitted = two_replicas(where, per_thread)
    fits = per_thread * 8
    assert admitted == fits, f"{name}: {admitted} admitted, {fits} fit"
    return (f"| {name} | {p50:.2f} | {p95:.2f} | {rate:,.0f} | {charges:,.0f} | "
            f"{admitted} of {2 * fits} (= the quota) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=16)
    args = parser.parse_args()
    rows = []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        rows.append(bench("SQLite (WAL file)", folder / "keys.db", args))
        url = os.environ.get("HYMT_TEST_POSTGRES_URL") or stack.enter_context(postgres_server())
        rows.append(bench("PostgreSQL (psycopg 3, loopback)", fresh_database(url), args))
    table = "\n".join([
        ("| store | lookup+charge P50 ms | P95 ms | via event loop, req/s | two replicas, "
         "charges/s | admitted |"),
        "|---|---|---|---|---|---|", *rows])
    text = (f"# Key store\n\n`benchmarks/key_store.py --requests {args.requests} --tasks "
            f"{args.tasks}` on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}.\n\n"
            f"{table}\n")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
