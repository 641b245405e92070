"""Measurements behind three Support-agent decisions, against a real server (HYMT_BASE_URL).

1. ``placeholders``: which placeholder shape the served model copies through a translation
   intact (protect.py masks order numbers, e-mails, URLs... with it). ``--hard``: round 2.
2. ``glossary``: whether the (unofficial) terminology template makes a glossary term appear in
   the translation more often than the plain official prompt, and how masking the term with
   its replacement compares (agent.py chooses the default from this).
3. ``drift``: the similarity of an agent reply to its own back-translation, against another
   reply's (drift.py's threshold).

    HYMT_BASE_URL=... HYMT_API_KEY=... .venv/bin/python benchmarks/agent_measure.py \
        [--only placeholders|glossary|drift] [--hard] [--repeat 2]

Results are printed and written to docs/results/agent-measure.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.prompts import build_prompt, build_terminology_prompt
from hymt_chat.lang.detect import detect_language
from hymt_chat.settings import Settings
from hymt_chat.text.segments import max_tokens_for

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results" / "agent-measure.json"

# (source, target, sentence with its protected spans in [brackets])
SENTENCES: list[tuple[str, str, str]] = [
    ("es", "en", "Hola, mi pedido [JD123456789] no ha llegado todavía."),
    ("es", "en", "¿Pueden escribirme a [maria.lopez@example.com] por favor?"),
    ("en", "es",
     "Your order [ORD-2024-001] ships tomorrow; track it at [https://track.example.com/o/77]."),
    ("en", "fr", "Hello [{name}], your refund for order [#12345] has been approved."),
    ("zh", "en", "您好，我的订单号是[JD123456789]，想查询物流状态。"),
    ("fr", "en", "Je n'ai pas reçu le colis [JD987654321], pouvez-vous vérifier ?"),
    ("en", "zh", "Please send the photo to [support@shop.example] and mention ticket [#48213]."),
    ("en", "de", "Run the command [`reset --all`] and then open [https://help.example.com/faq]."),
]
# Round 2 (--hard): several spans, spans first and last, Japanese and Chinese targets.
HARD: list[tuple[str, str, str]] = [
    ("en", "ja",
     "[JD123456789] was delivered to [Hans Müller] on Monday, see [https://t.example.com/x]."),
    ("en", "zh", "Dear [{customer}], order [ORD-2024-001] and [ORD-2024-002] are on the way."),
    ("en", "es", "Write to [help@example.com] or call [0612345678]; quote [#55120]."),
    ("de", "en",
     "Bitte geben Sie [%s] und [{order_id}] im Formular auf [www.example.de/form] ein."),
    ("zh", "en", "请把[JD123456789]的发票发到[wang.li@example.cn]，谢谢。"),
    ("en", "fr", "[SKU-88120] is out of stock until [2025-03-01]."),
]

# name -> (first index, tolerant pattern whose group 1 is the index); token = name with i.
SHAPES: dict[str, tuple[int, str]] = {
    "⟦i⟧": (0, r"⟦\s*(\d+)\s*⟧"),
    "<xi/>": (0, r"<\s*x\s*(\d+)\s*/?\s*>"),
    "{i}": (0, r"\{\s*(\d+)\s*\}"),
    "[[i]]": (1, r"\[\[\s*(\d+)\s*\]\]"),
    "__Pi__": (0, r"__\s*P\s*(\d+)\s*__"),
    "[i]": (1, r"\[\s*(\d+)\s*\]"),
}


def _token(shape: str, i: int) -> str:
    return shape.replace("i", str(i + SHAPES[shape][0]), 1) if shape != "<xi/>" else f"<x{i}/>"
_SPAN = re.compile(r"\[([^\[\]]+)\]")


def _split(sentence: str) -> tuple[str, list[str]]:
    """The sentence without brackets, and its spans."""
    return _SPAN.sub(lambda m: m.group(1), sentence), _SPAN.findall(sentence)


def _with_tokens(sentence: str, token: Callable[[int], str]) -> str:
    counter = iter(range(100))
    return _SPAN.sub(lambda m: token(next(counter)), sentence)


async def _ask(client: ModelClient, sem: asyncio.Semaphore, prompt: str, source: str) -> str:
    async with sem:
        answers = await client.complete(prompt, max_tokens=max_tokens_for(source, 4096),
                                        source=source)
    return answers[0]


async def placeholders(client: ModelClient, sem: asyncio.Semaphore, repeat: int,
                       shapes: list[str], sentences: list[tuple[str, str, str]]) -> dict:
    jobs = []
    for shape in shapes:
        for src, tgt, sentence in sentences:
            text = _with_tokens(sentence, lambda i, shape=shape: _token(shape, i))
            for _ in range(repeat):
                jobs.append((shape, src, tgt, sentence, text))
    plain_jobs = [("(no mask)", src, tgt, s, _split(s)[0]) for src, tgt, s in sentences
                  for _ in range(repeat)]
    jobs += plain_jobs
    answers = await asyncio.gather(*[_ask(client, sem, build_prompt(text, src, tgt), text)
                                     for _, src, tgt, _, text in jobs])
    table: dict[str, dict[str, int]] = {}
    samples: dict[str, list[str]] = {}
    for (shape, _src, tgt, sentence, text), answer in zip(jobs, answers, strict=True):
        row = table.setdefault(shape, {"requests": 0, "spans": 0, "exact": 0, "tolerant": 0,
                                       "all_exact": 0, "language_ok": 0})
        spans = _split(sentence)[1]
        row["requests"] += 1
        row["spans"] += len(spans)
        if shape == "(no mask)":
            kept = sum(answer.count(s) == 1 for s in spans)
            row["exact"] += kept
            row["tolerant"] += kept
            row["all_exact"] += kept == len(spans)
        else:
            first, pattern = SHAPES[shape]
            exact = sum(answer.count(_token(shape, i)) == 1 for i in range(len(spans)))
            found = [int(m) for m in re.findall(pattern, answer)]
            tolerant = sum(found.count(i + first) == 1 for i in range(len(spans)))
            row["exact"] += exact
            row["tolerant"] += tolerant
            row["all_exact"] += exact == len(spans)
        probe = re.sub(r"\S*\d\S*|\S+@\S+|https?://\S+|`[^`]*`", " ", answer)
        row["language_ok"] += detect_language(probe) in (tgt, None)
        samples.setdefault(shape, []).append(f"{text}  =>  {answer}")
    return {"table": table, "samples": samples}


# Glossary: (source, target, text, source term, target term). Target terms are ones the demo
# model does NOT produce unprompted, so that following the glossary is measurable.
GLOSSARY: list[tuple[str, str, str, str, str]] = [
    ("zh", "en", "我想查询一下订单号，谢谢。", "订单号", "order ID"),
    ("zh", "en", "请告诉我订单号和收货地址。", "订单号", "order ID"),
    ("es", "en", "Mi paquete todavía no ha llegado.", "paquete", "parcel"),
    ("es", "en", "El paquete estaba dañado cuando llegó.", "paquete", "parcel"),
    ("en", "es", "Your parcel will arrive tomorrow morning.", "parcel", "envío"),
    ("en", "es", "We have refunded the parcel fee to your card.", "parcel", "envío"),
    ("en", "fr", "Please keep the receipt for your warranty.", "receipt", "ticket de caisse"),
    ("en", "fr", "The receipt is attached to this message.", "receipt", "ticket de caisse"),
]


async def glossary(client: ModelClient, sem: asyncio.Semaphore, repeat: int) -> dict:
    from hymt_chat.modes.agent.protect import mask, unmask

    modes = ("plain prompt", "terminology template", "masked replacement")
    jobs = []
    for src, tgt, text, term, target_term in GLOSSARY:
        for mode in modes:
            if mode == "plain prompt":
                prompt, sent = build_prompt(text, src, tgt), text
                masked = None
            elif mode == "terminology template":
                prompt = build_terminology_prompt(text, tgt, [(term, target_term)])
                sent, masked = text, None
            else:
                masked = mask(text, {term: target_term})
                sent = masked.text
                prompt = build_prompt(sent, src, tgt)
            for _ in range(repeat):
                jobs.append((mode, tgt, target_term, prompt, sent, masked))
    answers = await asyncio.gather(*[_ask(client, sem, p, s) for *_, p, s, _m in jobs])
    table: dict[str, dict[str, int]] = {m: {"requests": 0, "term_used": 0, "language_ok": 0}
                                        for m in modes}
    samples: dict[str, list[str]] = {m: [] for m in modes}
    for (mode, tgt, target_term, _p, sent, masked), answer in zip(jobs, answers, strict=True):
        out = unmask(answer, masked).text if masked is not None else answer
        row = table[mode]
        row["requests"] += 1
        row["term_used"] += target_term.casefold() in out.casefold()
        row["language_ok"] += detect_language(out) in (tgt, None)
        samples[mode].append(f"{sent}  =>  {out}")
    return {"table": table, "samples": samples}


# Drift: agent replies translated and back-translated; the score of each against its own
# back-translation (should pass) and against another reply's (must be flagged).
REPLIES: list[tuple[str, str]] = [
    ("es", "Let me check the status of your order right away."),
    ("es", "Your refund has been approved and will arrive within five days."),
    ("fr", "We are sorry that the box was damaged during delivery."),
    ("fr", "Could you send us a photo of the damaged product, please?"),
    ("de", "The new password link is valid for one hour."),
    ("de", "Your parcel will be delivered tomorrow morning."),
    ("zh", "Thank you for your patience, I will call you back this afternoon."),
    ("zh", "Please restart the app and try to log in again."),
]


async def drift(client: ModelClient, sem: asyncio.Semaphore, repeat: int) -> dict:
    from hymt_chat.modes.agent.drift import similarity

    jobs = [(tgt, text) for tgt, text in REPLIES for _ in range(repeat)]
    forward = await asyncio.gather(*[_ask(client, sem, build_prompt(t, "en", tgt), t)
                                     for tgt, t in jobs])
    back = await asyncio.gather(*[_ask(client, sem, build_prompt(f, tgt, "en"), f)
                                  for (tgt, _), f in zip(jobs, forward, strict=True)])
    own = [similarity(t, b) for (_, t), b in zip(jobs, back, strict=True)]
    others = [similarity(jobs[i][1], back[j]) for i in range(len(jobs)) for j in range(len(jobs))
              if jobs[i][1] != jobs[j][1]]
    samples = [f"{t} => {f} => {b} ({s})" for (_, t), f, b, s in zip(jobs, forward, back, own,
                                                                     strict=True)]
    return {"table": {
        "own back-translation": {"n": len(own), "min": min(own),
                                 "median": sorted(own)[len(own) // 2],
                                 "below_0.5": sum(x < 0.5 for x in own)},
        "another reply's": {"n": len(others), "max": max(others),
                            "median": sorted(others)[len(others) // 2],
                            "at_or_above_0.5": sum(x >= 0.5 for x in others)},
    }, "samples": samples}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--only", choices=("placeholders", "glossary", "drift"))
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated shapes to compare (default: all)")
    parser.add_argument("--hard", action="store_true",
                        help="round 2: the harder sentences (several spans, ja/zh targets)")
    args = parser.parse_args()
    settings = Settings()
    client = ModelClient(settings)
    sem = asyncio.Semaphore(args.concurrency)
    started = time.monotonic()
    results: dict[str, object] = {"model": await client.model_name(), "repeat": args.repeat}
    shapes = [s for s in args.shapes.split(",") if s]
    runs = {
        "placeholders_round2" if args.hard else "placeholders": lambda: placeholders(
            client, sem, args.repeat, shapes, HARD if args.hard else SENTENCES),
        "glossary": lambda: glossary(client, sem, args.repeat),
        "drift": lambda: drift(client, sem, args.repeat),
    }
    for name, run in runs.items():
        if args.only in (None, name.split("_")[0]):
            results[name] = await run()
            for shape, row in results[name]["table"].items():  # type: ignore[index]
                print(f"{name:12} {shape:22} {row}", flush=True)
    results["seconds"] = round(time.monotonic() - started, 1)
    RESULTS.parent.mkdir(exist_ok=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    RESULTS.write_text(json.dumps({**old, **results}, ensure_ascii=False, indent=1) + "\n")
    print(f"written to {RESULTS} in {results['seconds']} s")
    await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
