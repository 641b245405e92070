"""Load benchmark: N simulated chat users against a real server whose capacity is pinned.

Three phases on the same server, same messages, greedy decoding (so a message costs the same
tokens in every phase):

1. **saturated** — the server's own ceiling: raw HTTP with exactly ``--capacity`` requests in
   flight (= vLLM's ``--max-num-seqs``: the batch always full, nothing refused). Measured in two
   halves, before and after the user runs, so that drift of a shared machine shows.
2. **policy** — N users, each sending M messages with think time in between, through the
   Translator and the process-wide Policy (window, fair queue, retries) with default settings.
3. **no-retry baseline** — the same users through the same Translator with a pass-through
   policy (no window, retries off): what a naive app does; a 503 is a failed message.

Throughput is messages delivered per second over the phase (first send to last answer), as a
fraction of the saturated rate; tokens/s comes from the server's vllm:generation_tokens_total.

    .venv/bin/python benchmarks/load.py [--users 40] [--messages 2]

Without HYMT_BASE_URL it launches its own demo sidecar with 2 running + 2 queued
(``--max-num-seqs 2 --max-num-queued-reqs 4``); with it, set ``--capacity`` to that server's
``--max-num-seqs``. Writes docs/results/load.md and load.png.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import re
import shlex
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from _server import model_server
from _workload import machine

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import family_in_force
from hymt_chat.engine.policy import Policy, PolicyEvent, policy_for
from hymt_chat.engine.prompts import build_prompt, chat_messages
from hymt_chat.engine.translator import Translator, plan_translation
from hymt_chat.errors import HymtError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint
from hymt_chat.text.segments import max_tokens_for

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
# 2 running + 2 queued (the profiles keep the stats on that vllm:generation_tokens_total needs).
SERVER_ARGS = "--max-num-seqs 2 --max-num-queued-reqs 4"

# Short support-chat lines, many languages: (text, target). 16 of them, so that the default
# 40 x 4 = 160 messages and the 2 x 16 saturation requests use exactly the same mix.
MESSAGES: list[tuple[str, str]] = [
    ("Bonjour, ma commande n'est toujours pas arrivée.", "en"),
    ("Hallo, wann wird mein Paket geliefert?", "en"),
    ("Hola, ¿puedo cambiar la dirección de envío?", "en"),
    ("Buongiorno, vorrei annullare il mio ordine.", "en"),
    ("Olá, recebi o produto errado.", "en"),
    ("Здравствуйте, я не получил чек.", "en"),
    ("您好，我想查询一下物流状态。", "en"),
    ("こんにちは、返品はできますか？", "en"),
    ("안녕하세요, 환불은 언제 되나요?", "en"),
    ("Goedendag, mijn pakket is beschadigd.", "en"),
    ("Dzień dobry, nie mogę się zalogować.", "en"),
    ("Merhaba, faturamı nereden indirebilirim?", "en"),
    ("Thank you, the problem is solved now.", "fr"),
    ("Your refund was approved this morning.", "de"),
    ("The courier will call you before delivery.", "es"),
    ("Please send us a photo of the damaged box.", "zh"),
]


@dataclass
class Phase:
    name: str
    sent: int = 0
    delivered: int = 0
    latencies: list[float] = field(default_factory=list)  # delivered messages only, seconds
    done_at: list[float] = field(default_factory=list)  # seconds since phase start, delivered
    failures: Counter[str] = field(default_factory=Counter)
    span: float = 0.0  # first send to last answer (delivered or failed)
    tokens: float | None = None  # generated tokens (server counter), None if not exposed
    notes: list[str] = field(default_factory=list)
    halves: tuple[float, float] | None = None  # saturated: the rate before and after the runs

    @property
    def success(self) -> float:
        return self.delivered / self.sent if self.sent else 0.0

    @property
    def rate(self) -> float:
        return self.delivered / self.span if self.span else 0.0

    @property
    def token_rate(self) -> float | None:
        return self.tokens / self.span if self.tokens is not None and self.span else None

    def pct(self, q: float) -> float | None:
        return float(np.percentile(self.latencies, q)) if self.latencies else None


# --- the server's own ceiling -------------------------------------------------------------------


async def generated_tokens(http: httpx.AsyncClient, endpoint: Endpoint) -> float | None:
    try:
        text = (await http.get(f"{endpoint.root}/metrics")).text
    except httpx.HTTPError:
        return None
    values = re.findall(r"^vllm:generation_tokens_total(?:\{[^}]*\})? (\S+)$", text, re.M)
    return sum(float(v) for v in values) if values else None


def raw_body(settings: Settings, text: str, target: str) -> dict[str, object]:
    """Exactly the request the Translator sends for this message (same prompt, same limits)."""
    plan = plan_translation(text, target, "auto", settings)
    core = plan.segments[0].strip()
    return {
        "model": settings.model,
        "messages": chat_messages(build_prompt(core, plan.source or plan.target, plan.target)),
        **family_in_force(settings).sampling.as_dict(),  # its max_tokens cap is replaced:
        "max_tokens": max_tokens_for(core, settings.max_model_len),
    }


async def saturate(http: httpx.AsyncClient, settings: Settings, endpoint: Endpoint,
                   jobs: list[tuple[str, str]], capacity: int, name: str) -> Phase:
    """Keep exactly *capacity* requests in flight until *jobs* are done."""
    phase = Phase(name, sent=len(jobs))
    pending = list(jobs)
    headers = {"Authorization": f"Bearer {endpoint.api_key}"}
    usage = 0
    tokens_before = await generated_tokens(http, endpoint)
    start = time.monotonic()

    async def worker() -> None:
        nonlocal usage
        while pending:
            text, target = pending.pop(0)
            sent = time.monotonic()
            response = await http.post(f"{endpoint.base_url}/chat/completions",
                                       json=raw_body(settings, text, target), headers=headers)
            response.raise_for_status()  # a 503 here means capacity is not the server's seqs
            usage += response.json()["usage"]["completion_tokens"]
            phase.delivered += 1
            phase.latencies.append(time.monotonic() - sent)
            phase.done_at.append(time.monotonic() - start)

    await asyncio.gather(*(worker() for _ in range(capacity)))
    phase.span = time.monotonic() - start
    tokens_after = await generated_tokens(http, endpoint)
    phase.tokens = (tokens_after - tokens_before
                    if tokens_before is not None and tokens_after is not None else float(usage))
    return phase


def merge(a: Phase, b: Phase, name: str) -> Phase:
    out = Phase(name, a.sent + b.sent, a.delivered + b.delivered, a.latencies + b.latencies)
    out.span = a.span + b.span
    out.tokens = (a.tokens or 0) + (b.tokens or 0)
    out.notes = [f"{a.rate:.3f} msg/s before the user runs, {b.rate:.3f} after"]
    out.halves = (a.rate, b.rate)
    return out


# --- simulated chat users -----------------------------------------------------------------------


async def chat_users(translator: Translator, name: str, args: argparse.Namespace,
                     http: httpx.AsyncClient, endpoint: Endpoint) -> Phase:
    """N users; each sends M messages, waiting for the answer and thinking between them."""
    rng = random.Random(args.seed)
    phase = Phase(name, sent=args.users * args.messages)
    tokens_before = await generated_tokens(http, endpoint)
    sends: list[float] = []
    answers: list[float] = []  # when each delivered message came back

    async def user(u: int, ramp: float, thinks: list[float]) -> None:
        await asyncio.sleep(ramp)
        for k in range(args.messages):
            text, target = MESSAGES[(u * args.messages + k) % len(MESSAGES)]
            sent = time.monotonic()
            sends.append(sent)
            try:
                await translator.translate(text, target, user=f"user-{u}")
            except HymtError as err:
                phase.failures[type(err).__name__] += 1
                sends.append(time.monotonic())  # a failure ends the run as late as an answer
            else:
                answers.append(time.monotonic())
                phase.delivered += 1
                phase.latencies.append(answers[-1] - sent)
            if k + 1 < args.messages:
                await asyncio.sleep(thinks[k])

    plans = [(rng.uniform(0, args.ramp), [rng.uniform(*args.think) for _ in range(args.messages)])
             for _ in range(args.users)]  # the same script for every phase (same seed)
    await asyncio.gather(*(user(u, ramp, thinks) for u, (ramp, thinks) in enumerate(plans)))
    first = min(sends)
    phase.span = max([*sends, *answers]) - first
    phase.done_at = [t - first for t in answers]
    tokens_after = await generated_tokens(http, endpoint)
    if tokens_before is not None and tokens_after is not None:
        phase.tokens = tokens_after - tokens_before
    return phase


class PolicyWatch:
    """What the policy did during a run: 503s met, unavailable retries, window range."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.events: Counter[tuple[str, str]] = Counter()
        self.start_window = policy.window
        self.windows: list[int] = []  # window sizes seen once it first moved
        self.max_ahead = 0
        policy.add_hook(self)

    def __call__(self, event: PolicyEvent) -> None:
        self.events[(event.kind, event.error)] += 1
        if self.windows or self.policy.window != self.start_window:
            self.windows.append(self.policy.window)
        if event.kind == "queued":
            self.max_ahead = max(self.max_ahead, event.ahead)

    def note(self) -> str:
        busy = self.events[("retrying", "busy (503)")]
        moved = (f", then between {min(self.windows)} and {max(self.windows)}"
                 if self.windows else "")
        return (f"503s met and retried: {busy}; window started at {self.start_window}{moved}; "
                f"longest line: {self.max_ahead} ahead")


# --- report ------------------------------------------------------------------------------------


def _s(value: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if value is None else fmt.format(value)


def table(saturated: Phase, runs: list[Phase]) -> str:
    head = ("| run | messages | delivered | success | P50 latency | P95 latency | msg/s "
            "| tokens/s | of saturated |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    rows = []
    for p in [saturated, *runs]:
        frac = p.rate / saturated.rate if saturated.rate else 0.0
        rows.append(
            f"| {p.name} | {p.sent} | {p.delivered} | {p.success:.0%} | {_s(p.pct(50))} s "
            f"| {_s(p.pct(95))} s | {p.rate:.3f} | {_s(p.token_rate)} | {frac:.0%} |"
        )
    return head + "\n".join(rows) + "\n"


def plot(saturated: Phase, runs: list[Phase], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6))
    colours = {runs[0].name: "tab:blue", runs[1].name: "tab:red"}
    horizon = max(p.span for p in runs)
    left.plot([0, horizon], [0, saturated.rate * horizon], "k--", lw=1,
              label=f"saturated server ({saturated.rate:.2f} msg/s)")
    for p in runs:
        times = sorted(p.done_at)
        left.step([0, *times], range(len(times) + 1), where="post", color=colours[p.name],
                  label=f"{p.name}: {p.delivered}/{p.sent} delivered")
    left.set(xlabel="seconds since the first message", ylabel="messages delivered",
             title="Delivered over time")
    left.legend(loc="upper left", fontsize=8)
    for p in runs:
        if p.latencies:
            lat = np.sort(p.latencies)
            right.plot(lat, np.arange(1, len(lat) + 1) / p.sent, color=colours[p.name],
                       label=f"{p.name} (P95 {_s(p.pct(95))} s)")
    right.set(xlabel="latency, send to answer (s)", ylabel="fraction of messages sent",
              ylim=(0, 1.02), title="Latency (failed messages never reach the top)")
    right.legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def report(args: argparse.Namespace, saturated: Phase, runs: list[Phase], server: str,
           version: str, started: dt.datetime, seconds: float) -> str:
    policy, baseline = runs
    frac = policy.rate / saturated.rate if saturated.rate else 0.0
    goal = "met" if policy.success == 1.0 and frac >= 0.9 else "NOT met"
    env = [f"{k}={shlex.quote(os.environ[k])}" for k in
           ("HYMT_BASE_URL", "HYMT_VLLM_PYTHON", "HYMT_CACHE_DIR") if os.environ.get(k)]
    command = " ".join([*env, ".venv/bin/python", "benchmarks/" + Path(sys.argv[0]).name,
                        *map(shlex.quote, sys.argv[1:])])
    drift = ""
    if saturated.halves and all(saturated.halves):
        lo, hi = sorted(policy.rate / h for h in saturated.halves)
        drift = (f" Against either half alone the policy run is at {lo:.0%} to {hi:.0%}"
                 + (": the machine is shared, so its speed drifts." if hi - lo > 0.05
                    else ": the machine's speed held steady."))
    lines = [
        "# Load benchmark",
        "",
        f"{args.users} simulated chat users, {args.messages} messages each (think time "
        f"{args.think[0]:g}-{args.think[1]:g} s, start spread over {args.ramp:g} s), against "
        f"{server}. Greedy decoding, so a message costs the same tokens in every run.",
        "",
        table(saturated, runs),
        f"**Goal** (100% delivered, at least 90% of the saturated throughput): **{goal}** — "
        f"{policy.success:.0%} delivered at {frac:.0%} of saturated.",
        "",
        "- **saturated**: raw HTTP, exactly the server's batch size in flight, nothing refused "
        f"({saturated.notes[0] if saturated.notes else ''}). Each answer leaves a slot empty for "
        "one client round trip; the policy keeps exactly the running slots busy (nothing waits "
        f"inside vLLM).{drift}",
        "- **policy**: hymt-chat's Translator and process-wide Policy, default settings "
        f"(deadline {args.deadline:g} s, window_max {args.capacity} = the server's seqs). "
        f"{' '.join(policy.notes)}",
        "- **no-retry baseline**: the same Translator with a pass-through policy (window pinned "
        "wide open, retries off), i.e. a plain client: every 503 is a failed message "
        f"({', '.join(f'{n} x {k}' for k, n in baseline.failures.items()) or 'none'}). Its "
        "msg/s looks healthy only because its run is short: the refused messages fail in "
        "milliseconds, so its users run out of messages early.",
        "- Latencies are of delivered messages, from send to answer (queueing included). "
        "msg/s is delivered messages over the run (first send to last answer).",
        "",
        "![load benchmark](load.png)",
        "",
        "Run:",
        "",
        "```",
        command,
        "```",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {seconds / 60:.1f} min.  ",
        f"Machine: {machine()}.  ",
        f"Server: vLLM {version}, demo model, float32 on CPU.",
        "",
    ]
    return "\n".join(lines)


# --- main --------------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> None:
    started = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    with model_server(SERVER_ARGS) as endpoint:
        # window_max = the server's --max-num-seqs: what engine_slots gives the app for its own
        # sidecar (an external server's seqs are not known to it; HYMT_WINDOW_MAX tells it).
        settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                            model=endpoint.model, temperature=0.0, deadline=args.deadline,
                            window_max=args.capacity)
        async with httpx.AsyncClient(timeout=settings.request_timeout or 120.0) as http:
            version = "?"
            try:
                version = (await http.get(f"{endpoint.root}/version")).json()["version"]
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            mix = [MESSAGES[i % len(MESSAGES)] for i in range(args.saturation)]
            print("warming up…", flush=True)
            await saturate(http, settings, endpoint, mix[: args.capacity], args.capacity, "warm")
            half = len(mix) // 2
            print(f"saturated, first half ({half} requests)…", flush=True)
            sat_a = await saturate(http, settings, endpoint, mix[:half], args.capacity, "a")

            print(f"policy: {args.users} users x {args.messages} messages…", flush=True)
            policy = policy_for(settings)  # the app's, built from settings
            watch = PolicyWatch(policy)
            translator = Translator(settings, ModelClient(settings), policy)
            run = await chat_users(translator, "policy", args, http, endpoint)
            run.notes.append(watch.note() + ".")
            print(f"  {run.delivered}/{run.sent} in {run.span:.0f} s", flush=True)

            print("no-retry baseline…", flush=True)
            # Pass-through: window pinned wide open (a 503 cannot shrink it) and no retries.
            # window_max alone is not enough: the first 503 would halve the window to what was
            # in flight, and that client-side queue alone already saves most messages.
            wide = 10**6
            naive = Policy(window_max=wide, window_min=wide, retries=False, deadline=args.deadline)
            base_translator = Translator(settings, ModelClient(settings), naive)
            base = await chat_users(base_translator, "no-retry baseline", args, http, endpoint)
            print(f"  {base.delivered}/{base.sent} in {base.span:.0f} s", flush=True)

            print(f"saturated, second half ({len(mix) - half} requests)…", flush=True)
            sat_b = await saturate(http, settings, endpoint, mix[half:], args.capacity, "b")
    saturated = merge(sat_a, sat_b, f"saturated ({args.capacity} in flight, raw HTTP)")
    runs = [run, base]
    server = ("HYMT_BASE_URL" if os.environ.get("HYMT_BASE_URL")
              else f"a demo vLLM sidecar started with `{SERVER_ARGS}`")
    RESULTS.mkdir(exist_ok=True)
    seconds = time.monotonic() - t0
    text = report(args, saturated, runs, server, version, started, seconds)
    (RESULTS / "load.md").write_text(text)
    plot(saturated, runs, RESULTS / "load.png",
         f"{args.users} users x {args.messages} messages, server with {args.capacity} running "
         f"+ queue cap (vLLM {version}, CPU)")
    print()
    print(table(saturated, runs))
    print(f"wrote {RESULTS / 'load.md'} and load.png ({seconds / 60:.1f} min)")


def _pair(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    return float(low), float(high or low)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=40, help="simulated chat users (40)")
    parser.add_argument("--messages", type=int, default=4, help="messages per user (4)")
    parser.add_argument("--think", type=_pair, default=(2.0, 6.0),
                        help="think time between a user's messages, seconds: MIN-MAX (2-6)")
    parser.add_argument("--ramp", type=float, default=2.0,
                        help="users start within this many seconds (2)")
    parser.add_argument("--saturation", type=int, default=32,
                        help="raw requests for the saturated measurement, half before and half "
                             "after the user runs (32)")
    parser.add_argument("--capacity", type=int, default=2,
                        help="requests the server runs at once (its --max-num-seqs; 2)")
    parser.add_argument("--deadline", type=float, default=Settings().deadline,
                        help="seconds a message may wait (the app's HYMT_DEADLINE)")
    parser.add_argument("--seed", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
