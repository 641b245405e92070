"""Meaning check: how often the hold stops a reply whose meaning changed, and how often it
stops a right one.

208 labelled replies (benchmarks/data/replies.jsonl): 8 language pairs x 26, each a source, a
translation and its back-translation into the source's language. Half are right translations
whose back-translation says the same thing in other words (the false holds to avoid); half
carry exactly one meaning error (negation, name, omission, addition, antonym, number, date) to
be held. The set was written apart from the checker's word lists, so that a hit is not a word
list meeting its own example. Every item goes through ``hymt_chat.text.verdict.judge`` with
its back-translation as written: no model is called, so the numbers measure the checker alone.

    .venv/bin/python benchmarks/meaning.py [--data benchmarks/data/replies.jsonl]

Writes docs/results/meaning.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from load import machine

from hymt_chat.text.meaning import missing_numbers, similarity
from hymt_chat.text.verdict import judge

RESULTS = ROOT / "docs" / "results"
DATA = ROOT / "benchmarks" / "data" / "replies.jsonl"
ERROR_KINDS = ("negation", "name", "omission", "addition", "antonym", "number", "date")
FALSE_HOLD_GOAL = 1 / 20  # a correct reply held at most once in 20


@dataclass(frozen=True)
class Item:
    pair: str
    source: str
    translation: str
    back: str
    label: str
    note: str

    @property
    def languages(self) -> tuple[str, str]:
        source, target = self.pair.split("-")
        return source, target


@dataclass(frozen=True)
class Outcome:
    item: Item
    hold: bool
    findings: tuple[tuple[str, str], ...]  # (kind, message)
    ms: float
    crashed: str = ""  # the exception, if judge raised one (then counted as not held)


def load(path: Path) -> list[Item]:
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        try:
            items.append(Item(raw["pair"], raw["source"], raw["translation"], raw["back"],
                              raw["label"], raw.get("note", "")))
        except KeyError as err:
            raise SystemExit(f"{path}:{number}: missing {err}") from None
    return items


def run(item: Item) -> Outcome:
    """One item through the checker; a crash is recorded rather than stopping the run, so one
    bad item does not hide the other 207."""
    source_lang, target = item.languages
    started = time.perf_counter()
    try:
        verdict = judge(item.source, item.translation, source_lang, target, back=item.back)
    except Exception as err:  # noqa: BLE001 - any crash: reported, not the run's end
        return Outcome(item, False, (), (time.perf_counter() - started) * 1000,
                       f"{type(err).__name__}: {err}")
    ms = (time.perf_counter() - started) * 1000
    return Outcome(item, bool(verdict.hold),
                   tuple((f.kind, f.message) for f in verdict.findings), ms)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "—"


def _findings(o: Outcome) -> str:
    if o.crashed:
        return f"judge raised {o.crashed}"
    return "; ".join(f"[{kind}] {message}" for kind, message in o.findings) or "no findings"


def _listing(outcomes: list[Outcome], with_label: bool) -> list[str]:
    lines = []
    for o in outcomes:
        head = f"{o.item.pair}, {o.item.label}" if with_label else o.item.pair
        lines += [f"- **{head}**: {o.item.source}  ",
                  f"  back: {o.item.back}  ",
                  f"  ({o.item.note}) — {_findings(o)}"]
    return lines or ["None."]


OLD_THRESHOLD = 0.4
"""The rule the verdict replaced: hold below this surface similarity, or when numbers differ."""


def old_rule(item: Item) -> bool:
    """Would the similarity threshold have held *item*? (Its numbers check as it was.)"""
    return (similarity(item.source, item.back) < OLD_THRESHOLD
            or bool(missing_numbers(item.source, item.back))
            or bool(missing_numbers(item.back, item.source)))


def baseline(outcomes: list[Outcome]) -> list[str]:
    """The same set through the similarity threshold, per kind: what the verdict improves."""
    rows = ["| | errors held (recall) | correct replies held | precision |",
            "|---|---:|---:|---:|"]
    errors = [o.item for o in outcomes if o.item.label != "ok"]
    correct = [o.item for o in outcomes if o.item.label == "ok"]
    for name, rule in (("similarity < 0.4, numbers", old_rule),
                       ("the verdict", None)):
        if rule is None:
            tp = sum(o.hold for o in outcomes if o.item.label != "ok")
            fp = sum(o.hold for o in outcomes if o.item.label == "ok")
        else:
            tp, fp = sum(map(rule, errors)), sum(map(rule, correct))
        rows.append(f"| {name} | {_share(tp, len(errors))} | {_share(fp, len(correct))} "
                    f"| {_share(tp, tp + fp)} |")
    kinds = list(dict.fromkeys(i.label for i in errors))
    rows += ["", "The similarity rule per kind: " + ", ".join(
        f"{k} {sum(old_rule(i) for i in errors if i.label == k)}/"
        f"{sum(i.label == k for i in errors)}" for k in kinds) + "."]
    return rows


def report(outcomes: list[Outcome], command: str, started: dt.datetime, data: Path) -> str:
    errors = [o for o in outcomes if o.item.label != "ok"]
    correct = [o for o in outcomes if o.item.label == "ok"]
    held_errors = sum(o.hold for o in errors)
    false_holds = [o for o in correct if o.hold]
    holds = held_errors + len(false_holds)
    pairs = list(dict.fromkeys(o.item.pair for o in outcomes))
    kinds = [k for k in ERROR_KINDS if any(o.item.label == k for o in errors)]
    kinds += sorted({o.item.label for o in errors} - set(kinds))

    def held(rows: list[Outcome]) -> str:
        return _share(sum(o.hold for o in rows), len(rows))

    by_kind = ["| error kind | held (recall) | " + " | ".join(pairs) + " |",
               "|---|---:|" + "---:|" * len(pairs)]
    for kind in kinds:
        rows = [o for o in errors if o.item.label == kind]
        cells = []
        for pair in pairs:
            these = [o for o in rows if o.item.pair == pair]
            cells.append(f"{sum(o.hold for o in these)}/{len(these)}" if these else "—")
        by_kind.append(f"| {kind} | {held(rows)} | " + " | ".join(cells) + " |")
    by_kind.append(f"| **all errors** | {held(errors)} | " + " | ".join(
        f"{sum(o.hold for o in errors if o.item.pair == p)}/"
        f"{sum(o.item.pair == p for o in errors)}" for p in pairs) + " |")

    by_pair = ["| pair | errors held (recall) | correct replies held (false holds) "
               "| precision of the hold |", "|---|---:|---:|---:|"]
    for pair in pairs:
        e = [o for o in errors if o.item.pair == pair]
        c = [o for o in correct if o.item.pair == pair]
        tp, fp = sum(o.hold for o in e), sum(o.hold for o in c)
        by_pair.append(f"| {pair} | {held(e)} | {held(c)} | {_share(tp, tp + fp)} |")
    by_pair.append(f"| **all** | {held(errors)} | {held(correct)} "
                   f"| {_share(held_errors, holds)} |")

    rate = len(false_holds) / len(correct) if correct else 0.0
    misses = [o for o in errors if not o.hold]
    crashed = [o for o in outcomes if o.crashed]
    times = [o.ms for o in outcomes]
    composition = Counter(o.item.label for o in outcomes)
    summary = [
        f"- Errors held (recall): {held(errors)}.",
        f"- Correct replies held (false holds): {held(correct)} — goal at most 1 in 20 "
        f"({FALSE_HOLD_GOAL:.0%}): {'met' if rate <= FALSE_HOLD_GOAL else 'not met'}.",
        f"- Precision of the hold (held replies that had an error): "
        f"{_share(held_errors, holds)}.",
        f"- Done criteria (every error held, at most 1 correct reply in 20 held): "
        f"{'met' if not misses and rate <= FALSE_HOLD_GOAL else 'not met'}.",
        f"- Time per judge call: P50 {statistics.median(times):.2f} ms, "
        f"max {max(times):.2f} ms (the first call's loading included)." if times else "",
    ]
    if crashed:
        summary.append(f"- judge raised on {len(crashed)} item(s), counted as not held "
                       "(listed below with the exception).")
    return "\n".join([
        "# Meaning check: the hold on a labelled set", "",
        f"{len(outcomes)} replies in {len(pairs)} language pairs "
        f"(`{data.relative_to(ROOT) if data.is_relative_to(ROOT) else data}`): "
        f"{composition['ok']} correct translations whose back-translation says the same in "
        f"other words, {len(errors)} with exactly one meaning error ("
        + ", ".join(f"{k} {composition[k]}" for k in kinds) + "). `en-*`: a support agent's "
        "replies to a customer; `*-en`: a customer's messages to an English-speaking agent. "
        "Each item goes through `hymt_chat.text.verdict.judge` with its back-translation as "
        "written (no model), so this measures the checker alone.", "",
        *[line for line in summary if line], "",
        "The meaning checks' word lists were written while reading this set's misses and "
        "false holds: these figures are in-sample. A set written after the lists is the fair "
        "test; the similarity threshold below never saw the set.", "",
        "## Errors held, per kind and per pair", "", *by_kind, "",
        "## Per pair", "", *by_pair, "",
        "## Against the similarity threshold it replaced", "", *baseline(outcomes), "",
        f"## Errors not held ({len(misses)})", "", *_listing(misses, True), "",
        f"## Correct replies held ({len(false_holds)})", "", *_listing(false_holds, False), "",
        *([f"## judge raised ({len(crashed)})", "", *_listing(crashed, True), ""]
          if crashed else []),
        "Run:", "", "```", command, "```", "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC.  ",
        f"Machine: {machine()}.", "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled set (JSONL)")
    args = parser.parse_args()
    started = dt.datetime.now(dt.UTC)
    outcomes = [run(item) for item in load(args.data.resolve())]
    command = " ".join([".venv/bin/python", "benchmarks/" + Path(sys.argv[0]).name,
                        *map(shlex.quote, sys.argv[1:])])
    text = report(outcomes, command, started, args.data.resolve())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "meaning.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
