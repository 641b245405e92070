"""A plain FastAPI app with the API mounted over a real Translator, served by uvicorn in a
thread: the `deepl` and `libretranslatepy` clients are synchronous and need a real socket."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from hymt_chat.api.keys import KeyStore
from hymt_chat.api.routes import mount
from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.service.metrics import Metrics
from hymt_chat.settings import Settings


@dataclass
class ApiApp:
    url: str
    store: KeyStore
    metrics: Metrics
    policy: Policy


def build_app(settings: Settings, store: KeyStore,
              memory: bool = False) -> tuple[FastAPI, Metrics, Policy]:
    """What app.py does: one policy, one client, one translator, the metrics, mount(); the
    translation memory (in the settings' cache folder) only when a test asks for it."""
    policy = Policy(window_max=settings.window_max or 2, deadline=settings.deadline,
                    reserve=settings.interactive_reserve, ranks=settings.priorities)
    metrics = Metrics(settings, policy)
    translator = metrics.instrument(Translator(
        settings, ModelClient(settings), policy,
        memory=Memory.for_settings(settings) if memory else None))
    app = FastAPI()

    @app.get("/{path:path}")  # like Chainlit's catch-all page route, registered first
    async def page(path: str) -> dict[str, str]:
        return {"page": path}

    mount(app, translator, settings, metrics=metrics, store=store)
    return app, metrics, policy


@contextlib.contextmanager
def serving(app: FastAPI, port: int) -> Iterator[str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextlib.contextmanager
def api_app(settings: Settings, db: Path, port: int, memory: bool = False) -> Iterator[ApiApp]:
    store = KeyStore(db)
    app, metrics, policy = build_app(settings, store, memory)
    with serving(app, port) as url:
        yield ApiApp(url, store, metrics, policy)
    store.close()
