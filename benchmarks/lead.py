"""The window's lead on a batch engine, without a GPU: the app against raw requests on a
stand-in that decodes in lockstep steps, as a GPU does.

    python benchmarks/lead.py [--leads 0,16] [--conc 64,128] [--seqs 64] [--step-ms 10]
                              [--tokens 64] [--per-user 4] [--rounds 3] [--page docs/results/lead.md]

The stand-in runs in a process of its own. Every step (``--step-ms``, whatever the batch, as a
memory-bound decode is) each running request gains one token; one that has ``max_tokens`` ends
and its answer goes out; waiting requests join at the next step, lowest ``priority`` first, up
to ``--seqs``. That is what makes a GPU idle while the app turns a finished batch over: raw
clients keep the next requests queued in the engine, the app (window = ``--seqs``) sends them
only once it has read the answers. The lead is the remedy measured here: each round runs the
app with every lead in turn, then raw, on the same prompts and tokens, and the page gives the
median of the rounds' ratios. A stand-in's step is not a GPU's, and this host's CPU is not a
GPU host's: the figure says how much of the turnover a lead hides, not the card's ratio
(``benchmarks/gpu.py --tests pair`` measures that).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import itertools
import multiprocessing
import os
import shlex
import socket
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _server import _free_port
from _workload import machine
from aiohttp import web
from gpu import CountingClient, app_pair_side, pair_verdict, raw_pair_side

from hymt_chat.engine.policy import policy_for
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
KEY = "lead-bench-key"


# --- the stand-in ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Call:
    seq: int
    priority: int
    tokens: int
    arrived: float
    done: int = 0
    answer: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop()
                                         .create_future())


def _serve(port: int, seqs: int, step: float) -> None:
    """The stepped engine on 127.0.0.1:*port*, until killed."""
    waiting: list[_Call] = []
    running: list[_Call] = []
    numbers = itertools.count()
    arrived = asyncio.Event()

    async def steps() -> None:
        """The steps on a grid of wall-clock time, caught up after any stall of this loop:
        an answer is due when its step ends, however late this process serves it (vLLM's
        engine steps in a process of its own, beside its HTTP server)."""
        loop = asyncio.get_running_loop()
        boundary = loop.time()
        while True:
            if not running and not waiting:
                arrived.clear()
                await arrived.wait()
                boundary = loop.time()
            now = loop.time()
            while boundary <= now:
                for call in running:  # the step that ends here
                    call.done += 1
                for call in [c for c in running if c.done >= c.tokens]:
                    running.remove(call)
                    call.answer.set_result(None)
                ready = sorted((c for c in waiting if c.arrived <= boundary),
                               key=lambda c: (c.priority, c.seq))
                for call in ready[:max(0, seqs - len(running))]:  # join the next step
                    waiting.remove(call)
                    running.append(call)
                boundary += step
            await asyncio.sleep(max(0.0, boundary - loop.time()))

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        call = _Call(next(numbers), int(body.get("priority", 0)), int(body["max_tokens"]),
                     asyncio.get_running_loop().time())
        waiting.append(call)
        arrived.set()
        await call.answer
        return web.json_response({
            "id": f"chatcmpl-{call.seq}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "hymt"),
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": "Hello, thank you."}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": call.tokens,
                      "total_tokens": 20 + call.tokens}})

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", completions)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await steps()

    asyncio.run(main())


# --- the rounds ------------------------------------------------------------------------------

async def one_round(base: str, args: argparse.Namespace, leads: list[int],
                    conc: int) -> dict[str, object]:
    """The app with each lead, then raw on the prompts the app sent: msg/s and the ratios."""
    out: dict[str, object] = {}
    prompts: list[str] = []
    for lead in leads:
        settings = Settings(base_url=base, api_key=KEY, model="hymt", checks=False,
                            bench_tokens=args.tokens, window_max=args.seqs, window_lead=lead)
        client = CountingClient(settings)
        try:
            app = await app_pair_side(Translator(settings, client, policy_for(settings)), conc,
                                      args.per_user)
        finally:
            await client.aclose()
        prompts = app.pop("prompts")  # type: ignore[assignment]
        out[f"app_{lead}"] = app
    body = {"model": "hymt", "max_tokens": args.tokens, "ignore_eos": True}
    async with httpx.AsyncClient(timeout=600, headers={"Authorization": f"Bearer {KEY}"}) as http:
        raw = await raw_pair_side(http, f"{base}/chat/completions", body, prompts, conc)
    out["raw"] = raw
    for lead in leads:
        verdict = pair_verdict(out[f"app_{lead}"], raw)  # type: ignore[arg-type]
        out[f"ratio_{lead}"] = verdict["ratio"]
        if verdict["ratio"] is None:
            raise SystemExit(f"lead {lead}: no ratio: {verdict['refused']}")
    return out


def page(args: argparse.Namespace, leads: list[int], results: dict[int, list[dict[str, Any]]],
         started: dt.datetime, where: str) -> str:
    rows = ["| users | " + " | ".join(f"app ÷ raw, lead {lead}" for lead in leads)
            + " | raw req/s | app msg/s, lead " + " / ".join(map(str, leads)) + " |",
            "|---:|" + "---:|" * (len(leads) + 2)]
    for conc, rounds in results.items():
        ratios = [statistics.median(float(r[f"ratio_{lead}"]) for r in rounds) for lead in leads]
        raw = statistics.median(float(r["raw"]["per_s"]) for r in rounds)
        apps = [statistics.median(float(r[f"app_{lead}"]["per_s"]) for r in rounds)
                for lead in leads]
        rows.append(f"| {conc} | " + " | ".join(f"**{x:.3f}**" for x in ratios)
                    + f" | {raw:.1f} | " + " / ".join(f"{x:.1f}" for x in apps) + " |")
    ceiling = args.seqs / (args.tokens * args.step_ms / 1000)
    command = shlex.join(["python", "benchmarks/lead.py", *sys.argv[1:]])
    return (
        "# The window's lead, on a stepped stand-in\n\n"
        "Written by `benchmarks/lead.py` (its docstring says how the stand-in decodes). "
        f"The engine runs {args.seqs} sequences, a step lasts {args.step_ms} ms whatever the "
        f"batch, every call decodes {args.tokens} tokens; {args.per_user} one-liners per user "
        f"back to back, checks off; the app's window is {args.seqs}. Each cell is the median "
        f"of {args.rounds} rounds, each round the app with every lead, then raw on the same "
        "prompts. The stand-in's own ceiling, its batch always full, is "
        f"{ceiling:.0f} requests a second; raw requests go out on httpx, on the same two "
        "cores, so raw is short of that ceiling too. This is how much of a batch's turnover a "
        "lead hides on this host, not a card's ratio: [GPU](gpu.md) has those.\n\n"
        f"`{command}`, {started:%Y-%m-%d %H:%M} UTC, {where}.\n\n" + "\n".join(rows) + "\n")


async def measure(args: argparse.Namespace, base: str, leads: list[int]) -> dict[int, list[dict[str, Any]]]:
    results: dict[int, list[dict[str, Any]]] = {c: [] for c in map(int, args.conc.split(","))}
    for k in range(args.rounds):
        for conc, rounds in results.items():
            rounds.append(await one_round(base, args, leads, conc))
            r = rounds[-1]
            print(f"round {k + 1}, {conc} users: raw {r['raw']['per_s']} req/s; "
                  + ", ".join(f"lead {lead}: {r[f'app_{lead}']['per_s']} msg/s "
                              f"({r[f'ratio_{lead}']})" for lead in leads), flush=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--leads", default="0,16")
    ap.add_argument("--conc", default="64,128")
    ap.add_argument("--seqs", type=int, default=64)
    ap.add_argument("--step-ms", type=float, default=10.0)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--per-user", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--page", default=str(ROOT / "docs" / "results" / "lead.md"))
    args = ap.parse_args()
    leads = [int(x) for x in args.leads.split(",")]
    port = _free_port()
    engine = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(port, args.seqs, args.step_ms / 1000), daemon=True)
    engine.start()
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while True:  # up when it answers (a refused connection until then)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if time.monotonic() > deadline or not engine.is_alive():
                raise SystemExit("the stand-in did not start") from None
            time.sleep(0.05)
    started, where = dt.datetime.now(dt.UTC), machine()
    os.environ.pop("HYMT_WINDOW_LEAD", None)  # the leads are the arguments'
    try:
        results = asyncio.run(measure(args, base, leads))
    finally:
        engine.kill()
    Path(args.page).write_text(page(args, leads, results, started, where))
    print(Path(args.page).read_text())


if __name__ == "__main__":
    main()
