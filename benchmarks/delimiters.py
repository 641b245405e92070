"""Subtitles and documents: one call per cue (today) versus blocks of cues with the delimiters
instruction (Hy-MT2's), against a real server (HYMT_BASE_URL) forced to the hy-mt2 family.

For each way: how many cues came back in their place (a block whose answer has another number
of delimiters loses all its cues: they would have to be sent again one by one), model calls,
and wall time. Greedy decoding (temperature 0) so a rerun gives the same answers.

    HYMT_BASE_URL=... HYMT_API_KEY=... HYMT_MODEL=... .venv/bin/python benchmarks/delimiters.py \
        [--block 8] [--target fr]

Results are printed and written to docs/results/delimiters.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import get_family
from hymt_chat.settings import Settings
from hymt_chat.text.cleanup import max_tokens_for

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results" / "delimiters.json"

CUES = [
    "Where were you last night?", "I waited for you until midnight.",
    "The train was late again.", "You could have called me.", "My phone ran out of battery.",
    "That's what you always say.", "Let's not fight about this now.", "Fine. Are you hungry?",
    "I could eat something.", "There's a new place around the corner.",
    "Do they serve noodles?", "I think so, and dumplings too.", "Then let's go before it rains.",
    "Take your umbrella, just in case.", "I left it at the office.", "Of course you did.",
    "Hey, that's not fair!", "I'm joking. Come on.", "Wait, I need my keys.",
    "They're on the table by the door.", "Got them. Let's go.", "Is it far?",
    "Ten minutes, maybe less.", "Perfect. I'm starving.",
]
DELIMITERS = {"newline": "\n", "pipes": " ||| "}


async def line_by_line(client: ModelClient, target: str) -> dict[str, object]:
    family = get_family("hy-mt2")
    started = time.perf_counter()
    answers = []
    for cue in CUES:
        prompt = family.prompt("default", text=cue, source="en", target=target)
        answers.append((await client.complete(prompt, max_tokens=max_tokens_for(cue, 4096),
                                              temperature=0.0, source=cue))[0])
    kept = sum(1 for a in answers if a.strip() and "\n" not in a.strip())
    return {"calls": len(CUES), "kept": kept, "seconds": round(time.perf_counter() - started, 1),
            "sample": answers[:3]}


async def blocks(client: ModelClient, target: str, size: int, delimiter: str) -> dict[str, object]:
    family = get_family("hy-mt2")
    started = time.perf_counter()
    kept = calls = 0
    samples = []
    for i in range(0, len(CUES), size):
        block = CUES[i:i + size]
        text = delimiter.join(block)
        prompt = family.prompt("delimiters", text=text, source="en", target=target)
        answer = (await client.complete(prompt, max_tokens=max_tokens_for(text, 4096),
                                        temperature=0.0, source=text))[0]
        calls += 1
        parts = answer.strip().split(delimiter.strip() if delimiter.strip() else "\n")
        if len(parts) == len(block) and all(p.strip() for p in parts):
            kept += len(block)
        samples.append(answer[:200])
    return {"calls": calls, "kept": kept, "seconds": round(time.perf_counter() - started, 1),
            "sample": samples[:2]}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--block", type=int, default=8)
    parser.add_argument("--target", default="fr")
    args = parser.parse_args()
    settings = Settings(model_family="hy-mt2", temperature=0.0)
    client = ModelClient(settings)
    results: dict[str, object] = {"cues": len(CUES), "block": args.block, "target": args.target,
                                  "line_by_line": await line_by_line(client, args.target)}
    for name, delimiter in DELIMITERS.items():
        results[f"delimiters_{name}"] = await blocks(client, args.target, args.block, delimiter)
    await client.aclose()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n")
    for name, row in results.items():
        if isinstance(row, dict):
            print(f"{name:22} kept {row['kept']:>2}/{len(CUES)}  calls {row['calls']:>2}  "
                  f"{row['seconds']:>6} s")


if __name__ == "__main__":
    asyncio.run(main())
