"""Own-tab benchmark: one chat tab sends a long French text, then one-liners.

The real app (``chainlit run app.py``) and a socket.io client like a browser tab's, against one
real vLLM server (a demo sidecar with 2 running + 2 queued unless HYMT_BASE_URL is set):

1. **alone** — the tab sends ``--messages`` one-line support messages one after another (each
   awaits its answer), before the document and again after it (a shared machine drifts); their
   median latency is the reference.
2. **own document** — the same tab pastes a ``--paragraphs``-paragraph French text (a long
   paste: bulk work, in the background), and once its progress line shows a part done, sends the
   same one-liners again. Goal: their P95 <= 2.0 x the median alone, every one answered, and the
   document back whole (no part marked missing).

A tab that waited for its own document would answer a one-liner sent 6 s after a 40-paragraph
text after the whole text (110 x its time alone).

    PYTHONPATH=. .venv/bin/python benchmarks/own_tab.py [--messages 6] [--paragraphs 40]

The app's window is the server's ``--max-num-seqs`` (HYMT_WINDOW_MAX, as the app computes it for
its own sidecar). Writes docs/results/own_tab.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import shlex
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _server import _free_port, model_server
from fairness import MESSAGES, SEQS, SERVER_ARGS, document
from load import machine

from hymt_chat.lang.names import language_name
from tests.support.chainlit_app import app_env, running_app
from tests.support.tabs import Tab

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
GOAL = 2.0
# One-liners into English from anything but French, so that each answer's meta line
# ("German → English") tells it apart from the French document's.
LINES = [(text, source) for text, source, target in MESSAGES
         if target == "en" and source not in ("fr", "en")]


def _shown(tab: Tab, meta: str) -> list[str]:
    """The outputs of the messages whose line says *meta*, in the order they came: a new
    message, or a long job's progress line that became its result (an update)."""
    outputs: dict[str, str] = {}
    for event, data in tab.events:
        if (event in ("new_message", "update_message") and isinstance(data, dict)
                and meta in (data.get("output") or "")):
            outputs[data.get("id") or str(len(outputs))] = data["output"]
    return list(outputs.values())


def _answers(tab: Tab, meta: str) -> int:
    return len(_shown(tab, meta))


async def _answered(tab: Tab, meta: str, before: int, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while _answers(tab, meta) <= before:
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer with {meta!r}")
        await asyncio.sleep(0.01)


async def one_liners(tab: Tab, count: int) -> list[float]:
    """Send *count* one-liners one after another; each one's seconds until its answer."""
    latencies = []
    for text, source in (LINES * count)[:count]:
        meta = f"{language_name(source)} → English"
        before = _answers(tab, meta)
        sent = time.monotonic()
        await tab.send(text)
        await _answered(tab, meta, before)
        latencies.append(time.monotonic() - sent)
    return latencies


async def run(url: str, args: argparse.Namespace) -> dict[str, object]:
    async with Tab(url) as tab:
        await tab.send("/to en")
        await tab.wait("English")
        await one_liners(tab, 1)  # warm-up, not measured
        alone = await one_liners(tab, args.messages)

        text = "\n\n".join(document(args.paragraphs).splitlines())
        started = time.monotonic()
        before = _answers(tab, "French → English")
        await tab.send(text)
        await tab.wait(" parts", timeout=900)  # the document's line: a part is done
        under = await one_liners(tab, args.messages)
        await _answered(tab, "French → English", before)
        doc_seconds = time.monotonic() - started
        answer = _shown(tab, "French → English")[-1]
        after = await one_liners(tab, args.messages)  # alone again: a shared machine drifts
    return {"alone": alone + after, "under": under, "doc_seconds": doc_seconds,
            "doc_whole": "not translated" not in answer,
            "halves": (float(np.median(alone)), float(np.median(after)))}


def report(args: argparse.Namespace, runs: list[dict[str, object]], server: str) -> str:
    rows = []
    for i, r in enumerate(runs, 1):
        alone, under = np.array(r["alone"]), np.array(r["under"])
        median = float(np.median(alone))
        p95 = float(np.percentile(under, 95))
        before, after = r["halves"]
        rows.append(f"| {i} | {median:.2f} ({before:.2f} before, {after:.2f} after) | "
                    f"{float(np.median(under)):.2f} | {p95:.2f} | "
                    f"**{p95 / median:.2f}×** | {r['doc_seconds']:.0f} s, "
                    f"{'whole' if r['doc_whole'] else 'PARTS MISSING'} |")
    command = ("PYTHONPATH=. .venv/bin/python benchmarks/own_tab.py "
               + shlex.join(sys.argv[1:])).rstrip()
    return "\n".join([
        f"# Own tab: a one-liner while the same tab's document translates ({dt.date.today()})",
        "",
        f"`{command}` — {machine()}.",
        f"Server: {server}. App: the real `chainlit run app.py`, window {SEQS}; one socket.io "
        f"tab. {args.messages} one-liners alone, then the same while the tab's "
        f"{args.paragraphs}-paragraph French text translates (sent once a part is done).",
        "",
        "| run | median alone (s) | median under (s) | P95 under (s) | P95 / median alone "
        f"(goal ≤ {GOAL:g}×) | document |",
        "|---|---|---|---|---|---|",
        *rows, ""])


async def main(args: argparse.Namespace) -> None:
    with model_server(SERVER_ARGS) as endpoint, tempfile.TemporaryDirectory() as tmp:
        env = app_env(HYMT_BASE_URL=endpoint.base_url, HYMT_API_KEY=endpoint.api_key,
                      HYMT_MODEL=endpoint.model, HYMT_WINDOW_MAX=str(SEQS),
                      HYMT_CACHE_DIR=str(Path(tmp) / "cache"), HYMT_PORT=str(_free_port()),
                      HYMT_RATE_LIMIT="", HYMT_RATE_LIMIT_CHARS="", HYMT_TEMPERATURE="0",
                      HYMT_MEMORY="false")  # the one-liners repeat: each must reach the model
        with running_app(env, _free_port(), Path(tmp) / "app.log") as url:
            runs = [await run(url, args) for _ in range(args.runs)]
    server = (f"demo vLLM (`{SERVER_ARGS}`)" if endpoint.root.startswith("http://127.0.0.1")
              else endpoint.root)
    text = report(args, runs, server)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "own_tab.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    # `timeout` and Ctrl-C alike: unwind, so that the app and the server started are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=6)
    parser.add_argument("--paragraphs", type=int, default=40)
    parser.add_argument("--runs", type=int, default=1)
    asyncio.run(main(parser.parse_args()))
