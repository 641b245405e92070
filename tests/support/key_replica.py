"""One app replica's share of a burst of quota charges, run in its own process (spawned): its
own key store, its own connections, as a second replica on another host would have."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hymt_chat.api.keys import KeyStore
from hymt_chat.errors import QuotaExceededError


def charge_burst(where: Path | str, name: str, chars: int, limit: int, threads: int,
                 per_thread: int, start: Any, results: Any) -> None:
    """Wait at *start* (a barrier shared with the other replica), then charge *chars* to *name*
    ``threads * per_thread`` times at once; put ``(admitted, refused)`` on *results*."""
    store = KeyStore(where)

    def one_thread() -> tuple[int, int]:
        admitted = refused = 0
        for _ in range(per_thread):
            try:
                store.charge(name, chars, limit)
                admitted += 1
            except QuotaExceededError:
                refused += 1
        return admitted, refused

    try:
        start.wait()
        with ThreadPoolExecutor(threads) as pool:
            counts = list(pool.map(lambda _: one_thread(), range(threads)))
        results.put((sum(a for a, _ in counts), sum(r for _, r in counts)))
    finally:
        store.close()
