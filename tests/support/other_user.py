"""Another user of the app, for measuring how much one request holds up everybody else: their
page loaded over and over, and the French texts the big request is made of."""

from __future__ import annotations

import threading
import time

import httpx

__all__ = ["OtherUser", "texts"]

LINE = "Bonjour, ma commande numéro {} est toujours en retard, pouvez-vous m'aider ? "


def texts(count: int, size: int = 40) -> list[str]:
    """*count* different French texts of about *size* characters (each is detected)."""
    return [(LINE.format(i) * (size // len(LINE) + 1))[:size] for i in range(count)]


class OtherUser:
    """Loads ``/hymt/status`` every 20 ms while in use; each page's seconds go to *pages*."""

    def __init__(self, url: str, pages: list[float] | None = None) -> None:
        self.url, self.done = url, threading.Event()
        self.pages: list[float] = pages if pages is not None else []
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def worst(self) -> float:
        return max(self.pages, default=0.0)

    def _run(self) -> None:
        with httpx.Client(timeout=30) as http:
            while not self.done.is_set():
                started = time.perf_counter()
                http.get(f"{self.url}/hymt/status")
                self.pages.append(time.perf_counter() - started)
                time.sleep(0.02)

    def __enter__(self) -> OtherUser:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
