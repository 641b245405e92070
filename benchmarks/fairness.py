"""Fairness benchmark: one user's live messages while another user's document translates.

One server; one process-wide Translator and Policy built like the app's (window 2 = the
server's ``--max-num-seqs``, one slot reserved for interactive messages, vLLM priorities on):

1. **alone** — user B sends ``--messages`` one-line support messages one after another (each
   awaits its answer, no think time); B's median latency is the reference.
2. **with document** — user A starts a ``--lines``-line French document (bulk class); once A
   has a segment done, B sends the same messages again. Goal: B's P95 <= 2.0 x the median
   alone, every message delivered, and A's document back whole.
3. **FCFS baseline** (``--fcfs-baseline``) — phase 2 first come, first served: window 8, no reserve,
   no vLLM priority (the window fills vLLM's own queue).

    .venv/bin/python benchmarks/fairness.py [--messages 8] [--lines 50]

**External** (``--external``): the app pointed at the server by URL only, as ``HYMT_BASE_URL``
alone sets it up: no window setting, no profile, so the window starts at the safe 2 and follows
the server's ``/metrics`` (hymt_chat/engine/window.py); the translator is the app's, over the
process-wide policy. ``--runs`` times (3): B alone, then B while A's document translates; each
run's P95 over that run's median alone. Goal: <= 1.5x in every run, all delivered, A whole.
Writes docs/results/fairness_external.md.

Without HYMT_BASE_URL it launches a demo sidecar with 2 running + 2 queued
(``--max-num-seqs 2 --max-num-queued-reqs 4``). Writes docs/results/fairness.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shlex
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _server import model_server
from _workload import MESSAGES, WARM_UP, document
from load import machine

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError, IncompleteTranslationError
from hymt_chat.modes.runtime import Runtime
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
SERVER_ARGS = "--max-num-seqs 2 --max-num-queued-reqs 4"  # the cpu profile adds priority
SEQS = 2  # the server's --max-num-seqs: what engine_slots gives the app for its sidecar
GOAL = 2.0
EXTERNAL_GOAL = 1.5  # a server reached by URL only: the window learns it from /metrics

@dataclass
class Run:
    name: str
    sent: int = 0
    latencies: list[float] = field(default_factory=list)  # delivered messages, seconds
    failures: Counter[str] = field(default_factory=Counter)
    doc: str = ""  # how A's document went (phases with a document)
    doc_ok: bool = True

    def pct(self, q: float) -> float | None:
        return float(np.percentile(self.latencies, q)) if self.latencies else None


def make_translator(endpoint: Endpoint, *, fcfs: bool = False) -> Translator:
    """The app's setup; *fcfs*: first come, first served (window 8 filling vLLM's queue, no
    priorities): what the classes and the reserve are measured against."""
    settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                        model=endpoint.model, temperature=0.0, window_max=SEQS,
                        engine_priority=not fcfs)
    policy = Policy(window_max=8 if fcfs else SEQS, deadline=settings.deadline,
                    reserve=0 if fcfs else settings.interactive_reserve, ranks=settings.priorities)
    return Translator(settings, ModelClient(settings), policy)


def app_runtime(endpoint: Endpoint) -> Runtime:
    """The app's setup for a server given by URL only (greedy decoding aside, so that a message
    costs the same in every run, and no memory, so that a repeat costs it too): no window_max,
    no profile; the app's policy, whose ceiling the engine's /metrics move."""
    settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                        model=endpoint.model, temperature=0.0, memory=False)
    assert settings.window_max is None and settings.profile == "auto", "HYMT_* set around us"
    return Runtime(settings)


def window_now(runtime: Runtime) -> str:
    """The window as /health shows it: "2 (engine metrics: the engine runs 2, full)"."""
    w = runtime.window()
    engine = w.get("engine")
    seen = ""
    if isinstance(engine, dict):
        seen = f": ran {engine['size']} at once" + (", more waited" if engine["full"] else "")
    return f"{w['max']}, reserve {w['reserve']} ({w['origin']}{seen})"


@dataclass
class Round:
    """One run of --external: B alone, then B with A's document, and the machine around it."""

    alone: Run
    doc: Run
    window: str
    load: tuple[float, float]  # 1-minute load average at its start and end


async def external_rounds(runtime: Runtime, messages: list[tuple[str, str, str]],
                          args: argparse.Namespace) -> list[Round]:
    translator, rounds = runtime.translator, []
    for i in range(1, args.runs + 1):
        start = os.getloadavg()[0]
        print(f"run {i}: B alone…", flush=True)
        alone = Run(f"run {i}: B alone")
        await user_b(translator, messages, alone)
        print(f"run {i}: A translates {args.lines} lines, B writes…", flush=True)
        doc = await with_document(translator, messages, args.lines, f"run {i}: with document")
        rounds.append(Round(alone, doc, window_now(runtime), (start, os.getloadavg()[0])))
        print(f"  P95 / alone median = {_s(ratio(alone, doc), '{:.2f}x')}; window "
              f"{rounds[-1].window}", flush=True)
    return rounds


def external_met(r: Round) -> bool:
    x = ratio(r.alone, r.doc)
    return (x is not None and x <= EXTERNAL_GOAL and not r.alone.failures
            and not r.doc.failures and r.doc.doc_ok)


def external_report(args: argparse.Namespace, rounds: list[Round], server: str,
                    started: dt.datetime, seconds: float) -> str:
    rows = ["| run | B alone P50 | B with A: P50 | P95 | P95 / alone median | B delivered "
            "| A's document | window after | load (start → end) |",
            "|---|---:|---:|---:|---:|---:|---|---|---|"]
    for i, r in enumerate(rounds, 1):
        rows.append(
            f"| {i} | {_s(r.alone.pct(50), '{:.2f}')} s | {_s(r.doc.pct(50), '{:.2f}')} s "
            f"| {_s(r.doc.pct(95), '{:.2f}')} s | **{_s(ratio(r.alone, r.doc), '{:.2f}x')}** "
            f"| {len(r.alone.latencies) + len(r.doc.latencies)}/{r.alone.sent + r.doc.sent} "
            f"| {r.doc.doc} | {r.window} | {r.load[0]:.1f} → {r.load[1]:.1f} |")
    met = all(external_met(r) for r in rounds)
    return "\n".join([
        "# Fairness benchmark, external server", "",
        f"The app pointed at {server} by URL only (no HYMT_WINDOW_MAX, no HYMT_PROFILE; greedy "
        "decoding): the window starts at the safe 2 and follows the server's /metrics. "
        f"Each run: user B sends {args.messages} one-line messages one after another alone, "
        f"then while user A's {args.lines}-line French document translates (bulk class).", "",
        *rows, "",
        f"**Goal** (every run: B's P95 during A <= {EXTERNAL_GOAL:g}x B's median alone, every "
        f"message delivered, A's document whole): **{'met' if met else 'NOT met'}**.", "",
        "Run:", "", "```", command_line(), "```", "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {seconds / 60:.1f} min.  ",
        f"Machine: {machine()}.", "",
    ])


async def user_b(translator: Translator, messages: list[tuple[str, str, str]], run: Run) -> None:
    for text, source, target in messages:
        run.sent += 1
        sent = time.monotonic()
        try:
            await translator.translate(text, target, source, user="B")
        except HymtError as err:  # IncompleteTranslationError included: not delivered
            run.failures[type(err).__name__] += 1
        else:
            run.latencies.append(time.monotonic() - sent)


async def with_document(translator: Translator, messages: list[tuple[str, str, str]],
                        lines: int, name: str) -> Run:
    run = Run(name)
    first = asyncio.Event()
    started = time.monotonic()
    task = asyncio.create_task(translator.translate(
        document(lines), "en", "fr", user="A", klass=BULK, on_progress=lambda d, t: first.set()))
    waiting = asyncio.create_task(first.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    await user_b(translator, messages, run)
    overlap = "" if not task.done() else " (A ended before B's last answer)"
    try:
        result = await task
    except IncompleteTranslationError as err:
        got = len(getattr(err.partial, "text", "").split("\n"))
        run.doc, run.doc_ok = f"incomplete: {err.done}/{err.total} parts ({got} lines)", False
    except HymtError as err:
        run.doc, run.doc_ok = f"failed: {type(err).__name__}", False
    else:
        got = len(result.text.split("\n"))
        run.doc_ok = got == lines
        run.doc = f"{'whole' if run.doc_ok else 'NOT whole'}: {got}/{lines} lines"
    run.doc = f"{time.monotonic() - started:.0f} s, {run.doc}{overlap}"
    return run


def _s(value: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if value is None else fmt.format(value)


def ratio(alone: Run, run: Run) -> float | None:
    """P95 of *run* over B's median alone."""
    base, p95 = alone.pct(50), run.pct(95)
    return p95 / base if base and p95 is not None else None


def verdict(alone: Run, run: Run) -> str:
    r = ratio(alone, run)
    met = r is not None and r <= GOAL and not alone.failures and not run.failures and run.doc_ok
    return f"{'met' if met else 'NOT met'} ({_s(r, '{:.2f}x')})"


def table(alone: Run, runs: list[Run]) -> str:
    rows = ["| run | B sent | delivered | P50 | P95 | P95 / alone median | A's document |",
            "|---|---:|---:|---:|---:|---:|---|"]
    rows += [f"| {r.name} | {r.sent} | {len(r.latencies)} | {_s(r.pct(50))} s | {_s(r.pct(95))} s "
             f"| {_s(ratio(alone, r), '{:.2f}x')} | {r.doc or '—'} |" for r in [alone, *runs]]
    return "\n".join(rows) + "\n"


def command_line() -> str:
    env = [f"{k}={shlex.quote(os.environ[k])}" for k in
           ("HYMT_BASE_URL", "HYMT_VLLM_PYTHON", "HYMT_CACHE_DIR") if os.environ.get(k)]
    return " ".join([*env, ".venv/bin/python", "benchmarks/" + Path(sys.argv[0]).name,
                     *map(shlex.quote, sys.argv[1:])])


def report(args: argparse.Namespace, alone: Run, runs: list[Run], server: str,
           started: dt.datetime, seconds: float) -> str:
    command = command_line()
    failures = "; ".join(f"{r.name}: " + ", ".join(f"{n} x {k}" for k, n in r.failures.items())
                         for r in [alone, *runs] if r.failures) or "none"
    fcfs = ["- **FCFS baseline**: window 8, no reserve, no vLLM priority (our own queue still "
            "orders by class), the window filling vLLM's queue."]
    return "\n".join([
        "# Fairness benchmark", "",
        f"User B sends {args.messages} one-line messages one after another (no think time), "
        f"alone, then while user A's {args.lines}-line French document translates (bulk class), "
        f"against {server}. App setup: window {SEQS} (the server's --max-num-seqs), "
        "1 slot reserved for interactive, vLLM priorities on; greedy decoding.", "",
        table(alone, runs),
        f"**Goal** (B's P95 during A <= {GOAL:g}x B's median alone, every message delivered, "
        f"A's document whole): **{verdict(alone, runs[0])}**.", "",
        f"- Messages not delivered: {failures}.",
        "- B starts once A has its first segment done; latencies are send to answer. Phase 2 "
        "repeats phase 1's texts, so vLLM's prefix cache may favour it slightly.",
        *(fcfs if args.fcfs_baseline else []),
        "", "Run:", "", "```", command, "```", "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {seconds / 60:.1f} min.  ",
        f"Machine: {machine()}.", "",
    ])


async def main(args: argparse.Namespace) -> None:
    started, t0 = dt.datetime.now(dt.UTC), time.monotonic()
    messages = [MESSAGES[i % len(MESSAGES)] for i in range(args.messages)]
    server = ("HYMT_BASE_URL" if os.environ.get("HYMT_BASE_URL")
              else f"a demo vLLM sidecar started with `{SERVER_ARGS}`")
    if args.external:
        with model_server(SERVER_ARGS) as endpoint:
            async with app_runtime(endpoint) as runtime:
                print("warming up…", flush=True)
                await user_b(runtime.translator, [WARM_UP], Run("warm"))
                rounds = await external_rounds(runtime, messages, args)
        seconds = time.monotonic() - t0
        RESULTS.mkdir(exist_ok=True)
        text = external_report(args, rounds, server, started, seconds)
        (RESULTS / "fairness_external.md").write_text(text)
        print("\n" + text)
        return
    with model_server(SERVER_ARGS) as endpoint:
        translator = make_translator(endpoint)  # the app's setup
        print("warming up…", flush=True)
        await user_b(translator, [WARM_UP], Run("warm"))
        print(f"alone: B sends {args.messages} messages…", flush=True)
        alone = Run("alone")
        await user_b(translator, messages, alone)
        print(f"with document: A translates {args.lines} lines…", flush=True)
        runs = [await with_document(translator, messages, args.lines, "with document")]
        if args.fcfs_baseline:
            print("FCFS baseline…", flush=True)
            old = make_translator(endpoint, fcfs=True)
            runs.append(await with_document(old, messages, args.lines, "FCFS baseline"))
    seconds = time.monotonic() - t0
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fairness.md").write_text(report(args, alone, runs, server, started, seconds))
    print()
    print(table(alone, runs))
    print(f"goal (P95 / alone median <= {GOAL:g}, all delivered, document whole): "
          f"{verdict(alone, runs[0])}")
    print(f"wrote {RESULTS / 'fairness.md'} ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=8, help="B's messages per phase (8)")
    parser.add_argument("--lines", type=int, default=50, help="lines of A's document, 1-100 (50)")
    parser.add_argument("--fcfs-baseline", action="store_true",
                        help="also run phase 2 first come, first served (window 8, no priorities)")
    parser.add_argument("--external", action="store_true",
                        help="the app's own setup for a server by URL only (window from its "
                        "/metrics), --runs times")
    parser.add_argument("--runs", type=int, default=3, help="runs of --external (3)")
    options = parser.parse_args()
    if not 1 <= options.lines <= 100:
        parser.error("--lines must be between 1 and 100 (the document has 100 distinct lines)")
    asyncio.run(main(options))
