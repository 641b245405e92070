"""What the pure core costs a chat message, in isolation: the source's detection, its values,
and the answer's check, on the app ceiling's sentence (each message numbered, so nothing is
remembered from the last; once more numbered in letters: no digit), in this process's CPU time;
first what is paid once: the detector's load and the language pair's value patterns.

The app's own ceiling (``app_ceiling.py``) measures the whole process, whose CPU time per
message moves by a third between runs on a shared machine; these stages alone move less, so a
change to them is seen here first. Run it on two checkouts alternately to compare them:

    PYTHONPATH=. .venv/bin/python benchmarks/message_core.py [--messages 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _instant_model import ENGLISH, FRENCH

from hymt_chat.lang.detect import detect_language, warm_up
from hymt_chat.text.checks import check_translation
from hymt_chat.text.values import extract_values, prepare_values

_LETTERS = str.maketrans("0123456789", "abcdefghij")


def _best(stage: Callable[[int], object], messages: int, rounds: int, start: int) -> float:
    """The fastest round's CPU µs per message (the least disturbed by neighbours)."""
    best = float("inf")
    for r in range(rounds):
        began = time.process_time()
        for i in range(messages):
            stage(start + r * messages + i)
        best = min(best, (time.process_time() - began) / messages)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    began = time.process_time()
    warm_up()
    print(f"{'detector loaded':18s} {(time.process_time() - began) * 1e3:8.0f} ms", flush=True)
    began = time.process_time()
    prepare_values("fr", "en")  # the pair's value patterns, both orders (start-up, not per message)
    print(f"{'fr-en patterns':18s} {(time.process_time() - began) * 1e3:8.0f} ms", flush=True)
    source = lambda n: f"{FRENCH}{n}."  # the ceiling's messages
    answer = lambda n: f"{ENGLISH}{n}."
    # the same line numbered in letters: most chat lines carry no digit
    wordy = lambda n: f"{FRENCH}{str(n).translate(_LETTERS)}."
    stages: dict[str, Callable[[int], object]] = {
        "source detection": lambda n: detect_language(source(n)),
        "source values": lambda n: extract_values(source(n), ["fr", "en"]),
        "values, no digit": lambda n: extract_values(wordy(n), ["fr", "en"]),
        # the answer's values, its language, leftovers... (and the source's values again)
        "answer check": lambda n: check_translation(source(n), answer(n), "fr", "en"),
    }
    for stage in stages.values():  # patterns built, tables read: not part of a message
        stage(0)
    start = 10**6
    for name, stage in stages.items():
        print(f"{name:18s} {_best(stage, args.messages, args.rounds, start):8.0f} µs",
              flush=True)
        start += args.messages * args.rounds


if __name__ == "__main__":
    main()
