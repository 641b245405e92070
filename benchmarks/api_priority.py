"""API priority benchmark: a chat user's one-line messages, alone and while API clients hammer.

One process like the app: one Translator and Policy (window 2 = the server's --max-num-seqs,
one slot reserved for interactive messages, vLLM priorities on) shared by

* the chat user B, who calls the translator as app.py does (interactive class), and
* ``--clients`` DeepL API clients, each sending one-line ``/deepl/v2/translate`` requests back
  to back over real HTTP to the API mounted on a FastAPI app served by uvicorn in this loop.

Phases: **alone** (B's median is the reference), **with API load** (B's P95 over that median:
goal <= 2), and with ``--baseline`` the same load with API requests in the interactive class
(what a naive API would do: as urgent as a chat message, allowed into the reserved slot).

    .venv/bin/python benchmarks/api_priority.py [--messages 8] [--clients 4] [--baseline]

Without HYMT_BASE_URL it launches a demo sidecar with 2 running + 2 queued. Writes
docs/results/api_priority.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shlex
import socket
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import uvicorn
from _server import model_server
from fairness import MESSAGES, SEQS, SERVER_ARGS, WARM_UP, user_b
from fairness import Run as ChatRun
from fastapi import FastAPI
from load import machine

import hymt_chat.api.work as api_work
from hymt_chat.api.keys import KeyStore
from hymt_chat.api.routes import mount
from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.priority import INTERACTIVE
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
GOAL = 2.0
API_TEXTS = [  # what a browser extension or Weblate sends: short strings, many of them
    "Add to cart", "Your order has shipped.", "Forgot your password?",
    "Free returns within 30 days.", "Sign in to continue.", "Contact customer support",
    "Delivery is expected tomorrow.", "Thank you for your purchase!",
]


@dataclass
class ApiLoad:
    sent: int = 0
    ok: int = 0
    latencies: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build(endpoint: Endpoint, folder: Path, clients: int) -> tuple[Translator, FastAPI, list[str]]:
    settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                        model=endpoint.model, temperature=0.0, window_max=SEQS,
                        cache_dir=folder)
    policy = Policy(window_max=SEQS, deadline=settings.deadline,
                    reserve=settings.interactive_reserve, ranks=settings.priorities)
    translator = Translator(settings, ModelClient(settings), policy)
    store = KeyStore(folder / "keys.db")
    keys = [store.create(f"client{i}", per_minute=100_000) for i in range(clients)]
    app = FastAPI()
    mount(app, translator, settings, store=store)
    return translator, app, keys


async def api_client(url: str, key: str, index: int, stop: asyncio.Event, load: ApiLoad) -> None:
    headers = {"Authorization": f"DeepL-Auth-Key {key}"}
    async with httpx.AsyncClient(timeout=600) as http:
        n = index
        while not stop.is_set():
            text = API_TEXTS[n % len(API_TEXTS)]
            n += 1
            load.sent += 1
            sent = time.monotonic()
            answer = await http.post(url + "/deepl/v2/translate", headers=headers,
                                     json={"text": [text], "target_lang": "DE",
                                           "source_lang": "EN"})
            if answer.status_code == 200:
                load.ok += 1
                load.latencies.append(time.monotonic() - sent)
            else:
                load.failures[str(answer.status_code)] += 1


async def with_api_load(translator: Translator, url: str, keys: list[str],
                        messages: list[tuple[str, str, str]], name: str) -> tuple[ChatRun, ApiLoad]:
    run, load, stop = ChatRun(name), ApiLoad(), asyncio.Event()
    clients = [asyncio.create_task(api_client(url, key, i, stop, load))
               for i, key in enumerate(keys)]
    while load.ok < len(keys):  # B starts once the API load is in full swing
        await asyncio.sleep(0.1)
    started = time.monotonic()
    await user_b(translator, messages, run)
    stop.set()
    await asyncio.gather(*clients)
    run.doc = f"{load.ok} API requests in {time.monotonic() - started:.0f} s"
    return run, load


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _s(value: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if value is None else fmt.format(value)


def table(alone: ChatRun, runs: list[tuple[ChatRun, ApiLoad]]) -> str:
    base = alone.pct(50)
    rows = [("| run | B delivered | B P50 | B P95 | B P95 ÷ B median alone | API requests "
             "(ok/sent) | API P50 | API P95 |"), "|---|---:|---:|---:|---:|---:|---:|---:|",
            (f"| B alone | {len(alone.latencies)}/{alone.sent} | {_s(alone.pct(50))} s | "
             f"{_s(alone.pct(95))} s | {_s(alone.pct(95) / base if base else None, '{:.2f}×')} "
             "| — | — | — |")]
    for run, load in runs:
        r = run.pct(95) / base if base and run.pct(95) else None
        rows.append(f"| {run.name} | {len(run.latencies)}/{run.sent} | {_s(run.pct(50))} s | "
                    f"{_s(run.pct(95))} s | **{_s(r, '{:.2f}×')}** | {load.ok}/{load.sent} | "
                    f"{_s(pct(load.latencies, 50))} s | {_s(pct(load.latencies, 95))} s |")
    return "\n".join(rows) + "\n"


async def main(args: argparse.Namespace) -> None:
    started, t0 = dt.datetime.now(dt.UTC), time.monotonic()
    messages = [MESSAGES[i % len(MESSAGES)] for i in range(args.messages)]
    runs: list[tuple[ChatRun, ApiLoad]] = []
    with model_server(SERVER_ARGS) as endpoint, tempfile.TemporaryDirectory() as tmp:
        translator, app, keys = build(endpoint, Path(tmp), args.clients)
        port = _port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        print("warming up…", flush=True)
        await user_b(translator, [WARM_UP], ChatRun("warm"))
        print(f"alone: B sends {args.messages} messages…", flush=True)
        alone = ChatRun("B alone")
        await user_b(translator, messages, alone)
        print(f"with {args.clients} API clients…", flush=True)
        runs.append(await with_api_load(translator, url, keys, messages,
                                        f"B while {args.clients} API clients hammer"))
        if args.baseline:
            print("baseline: API requests as interactive…", flush=True)
            api_work.API = INTERACTIVE  # type: ignore[attr-defined,misc] - the naive API
            runs.append(await with_api_load(translator, url, keys, messages,
                                            "baseline: API in the interactive class"))
        server.should_exit = True
        await serving
    seconds = time.monotonic() - t0
    ratio = (runs[0][0].pct(95) or 0) / (alone.pct(50) or 1)
    met = ratio <= GOAL and not alone.failures and not runs[0][0].failures
    env = [f"{k}={shlex.quote(os.environ[k])}" for k in
           ("HYMT_BASE_URL", "HYMT_VLLM_PYTHON", "HYMT_CACHE_DIR") if os.environ.get(k)]
    command = " ".join([*env, ".venv/bin/python", "benchmarks/" + Path(sys.argv[0]).name,
                        *map(shlex.quote, sys.argv[1:])])
    text = "\n".join([
        "# API priority benchmark", "",
        (f"Chat user B sends {args.messages} one-line messages one after another, alone, then "
         f"while {args.clients} DeepL API clients send one-line requests back to back over HTTP "
         f"(the API mounted on the same translator), against a demo vLLM sidecar started with "
         f"`{SERVER_ARGS}`. App setup: window {SEQS}, 1 slot reserved for interactive, vLLM "
         "priorities on, API requests in the `api` class; greedy decoding."), "",
        table(alone, runs),
        (f"**Goal** (B's P95 under API load <= {GOAL:g}× B's median alone, every message "
         f"delivered): **{'met' if met else 'NOT met'} ({ratio:.2f}×)**."), "",
        "Run:", "", "```", command, "```", "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {seconds / 60:.1f} min.  ",
        f"Machine: {machine()}.", ""])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "api_priority.md").write_text(text)
    print()
    print(table(alone, runs))
    print(f"goal: {'met' if met else 'NOT met'} ({ratio:.2f}×); wrote "
          f"{RESULTS / 'api_priority.md'} ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=8, help="B's messages per phase (8)")
    parser.add_argument("--clients", type=int, default=4, help="API clients at once (4)")
    parser.add_argument("--baseline", action="store_true",
                        help="also run with API requests in the interactive class")
    asyncio.run(main(parser.parse_args()))
