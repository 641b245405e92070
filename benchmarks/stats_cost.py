"""What vLLM's stats cost: the engine's saturated throughput with ``--disable-log-stats`` (the
profiles' old flag) and without it while /metrics is read every second (what the app's window
watch now does, hymt_chat/engine/window.py).

For each of ``--rounds`` rounds, in the order off, on (so drift of a shared machine shows in
both): a demo vLLM sidecar with 2 running + 2 queued (``--max-num-seqs 2
--max-num-queued-reqs 4``, plus ``--disable-log-stats`` for "off") is started, warmed with 2
requests, then load.py's saturated phase keeps exactly 2 requests in flight over ``--jobs``
support-chat lines (the same mix, greedy decoding); then ``--single`` requests one at a time
give the latency of one request alone. "On" also reads /metrics every second throughout, and
times those reads.

    .venv/bin/python benchmarks/stats_cost.py [--rounds 2] [--jobs 32] [--single 8]

Writes docs/results/stats_cost.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from _server import model_server
from load import MESSAGES, machine, raw_body, saturate

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
SERVER_ARGS = "--max-num-seqs 2 --max-num-queued-reqs 4"


@dataclass
class Sample:
    stats: bool
    msg_rate: float = 0.0
    token_rate: float = 0.0
    single_p50: float = 0.0
    scrapes: list[float] = field(default_factory=list)  # seconds per /metrics read ("on")
    load: tuple[float, float] = (0.0, 0.0)


async def scraping(http: httpx.AsyncClient, endpoint: Endpoint, out: list[float],
                   stop: asyncio.Event) -> None:
    """What the app's window watch does: one /metrics read a second."""
    while not stop.is_set():
        start = time.monotonic()
        await http.get(f"{endpoint.root}/metrics")
        out.append(time.monotonic() - start)
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


async def one_round(stats: bool, args: argparse.Namespace) -> Sample:
    sample = Sample(stats)
    flags = SERVER_ARGS + ("" if stats else " --disable-log-stats")
    with model_server(flags) as endpoint:
        settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                            model=endpoint.model, temperature=0.0)
        jobs = [MESSAGES[i % len(MESSAGES)] for i in range(args.jobs)]
        headers = {"Authorization": f"Bearer {endpoint.api_key}"}
        async with httpx.AsyncClient(timeout=600) as http:
            await saturate(http, settings, endpoint, jobs[:2], 2, "warm-up")
            sample.load = (os.getloadavg()[0], 0.0)
            stop = asyncio.Event()
            reader = (asyncio.create_task(scraping(http, endpoint, sample.scrapes, stop))
                      if stats else None)
            phase = await saturate(http, settings, endpoint, jobs, 2, "saturated")
            singles = []
            for text, target in jobs[:args.single]:
                start = time.monotonic()
                response = await http.post(f"{endpoint.base_url}/chat/completions",
                                           json=raw_body(settings, text, target),
                                           headers=headers)
                response.raise_for_status()
                singles.append(time.monotonic() - start)
            stop.set()
            if reader is not None:
                await reader
            sample.load = (sample.load[0], os.getloadavg()[0])
    sample.msg_rate = phase.rate
    sample.token_rate = phase.token_rate or 0.0
    sample.single_p50 = float(np.median(singles))
    return sample


def report(samples: list[Sample], args: argparse.Namespace, started: dt.datetime,
           seconds: float) -> str:
    rows = ["| round | stats | saturated msg/s | tokens/s | one request alone (P50) "
            "| /metrics read (P50 / max) | load (start → end) |",
            "|---|---|---:|---:|---:|---:|---|"]
    for i, s in enumerate(samples):
        reads = (f"{np.median(s.scrapes) * 1000:.0f} / {max(s.scrapes) * 1000:.0f} ms "
                 f"({len(s.scrapes)})" if s.scrapes else "—")
        rows.append(f"| {i // 2 + 1} | {'on, read every 1 s' if s.stats else 'off'} "
                    f"| {s.msg_rate:.3f} | {s.token_rate:.1f} | {s.single_p50:.2f} s | {reads} "
                    f"| {s.load[0]:.1f} → {s.load[1]:.1f} |")

    def mean(stats: bool, key: str) -> float:
        return float(np.mean([getattr(s, key) for s in samples if s.stats == stats]))

    change = mean(True, "msg_rate") / mean(False, "msg_rate") - 1
    alone = mean(True, "single_p50") / mean(False, "single_p50") - 1
    command = " ".join([".venv/bin/python", "benchmarks/" + Path(sys.argv[0]).name,
                        *map(shlex.quote, sys.argv[1:])])
    return "\n".join([
        "# What vLLM's stats cost", "",
        f"A demo vLLM sidecar (`{SERVER_ARGS}`), started afresh for each row; {args.jobs} "
        "support-chat lines with exactly 2 in flight (saturated), then "
        f"{args.single} one at a time. \"off\": `--disable-log-stats` (the profiles' old flag); "
        "\"on\": the profiles now, with /metrics read every second as the app's window does.",
        "", *rows, "",
        f"On vs off, mean of the rounds: saturated throughput {change:+.1%}, one request alone "
        f"{alone:+.1%}.", "",
        "Run:", "", "```", command, "```", "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {seconds / 60:.1f} min.  ",
        f"Machine: {machine()}.", "",
    ])


async def main(args: argparse.Namespace) -> None:
    if os.environ.get("HYMT_BASE_URL"):
        raise SystemExit("stats_cost.py starts its own servers (with and without stats): "
                         "unset HYMT_BASE_URL")
    started, t0 = dt.datetime.now(dt.UTC), time.monotonic()
    samples = []
    for r in range(args.rounds):
        for stats in (False, True):
            print(f"round {r + 1}, stats {'on' if stats else 'off'}…", flush=True)
            samples.append(await one_round(stats, args))
            s = samples[-1]
            print(f"  {s.msg_rate:.3f} msg/s, {s.token_rate:.1f} tok/s, alone "
                  f"{s.single_p50:.2f} s", flush=True)
    text = report(samples, args, started, time.monotonic() - t0)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stats_cost.md").write_text(text)
    print("\n" + text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of off, on (2)")
    parser.add_argument("--jobs", type=int, default=32, help="saturated requests (32)")
    parser.add_argument("--single", type=int, default=8, help="requests one at a time (8)")
    asyncio.run(main(parser.parse_args()))
