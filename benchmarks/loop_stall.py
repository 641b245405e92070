"""How long one API request at the list cap holds up everybody else.

The real app (``chainlit run app.py``) on the counting stand-in model of ``tests/support/tabs.py``
(answers at once: what is measured is the app). Each round sends LibreTranslate requests of 50
texts of 1,500 characters, source ``auto`` (detection of every text, two segments each),
while another user loads ``/hymt/status`` every 20 ms. Reported per round: the app's own worst
event-loop stall in that round (``hymt_event_loop_stall_seconds``: lateness of a 20 ms timer
while the loop's thread ran code, a histogram bound) and the other user's slowest and median
page, beside the same pages for 3 s with no request (the host's own noise); with the load
average, since page times include the host's scheduling.

    PYTHONPATH=. .venv/bin/python benchmarks/loop_stall.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx

from tests.support.other_user import OtherUser, texts
from tests.support.scrape import sample, scrape
from tests.support.tabs import app

STALL = "hymt_event_loop_stall_seconds"
def worst_between(before: dict, after: dict) -> float:
    """An upper bound of the worst stall between two scrapes: the smallest histogram bound
    under which every stall of the interval fell (0: none)."""
    def count(samples: dict, bound: str) -> float:
        return sample(samples, f"{STALL}_bucket", le=bound)

    bounds = sorted({dict(labels)["le"] for (name, labels) in after if name == f"{STALL}_bucket"},
                    key=float)
    new = sample(after, f"{STALL}_count") - sample(before, f"{STALL}_count")
    for bound in bounds:
        if count(after, bound) - count(before, bound) >= new:
            return 0.0 if new == 0 else float(bound)
    return float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    env = {"HYMT_API_OPEN_LOCAL": "1", "HYMT_RATE_LIMIT": "", "HYMT_RATE_LIMIT_CHARS": "",
           "HYMT_RATE_LIMIT_CALLS": ""}
    with tempfile.TemporaryDirectory() as folder, app(Path(folder), **env) as (url, _):
        body = {"q": texts(50, 1500), "source": "auto", "target": "en"}
        httpx.post(f"{url}/libretranslate/translate", json={**body, "q": texts(2, 40)},
                   timeout=120)
        httpx.get(f"{url}/hymt/status", timeout=30)
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        for n in range(1, args.rounds + 1):
            quiet: list[float] = []
            with OtherUser(url, quiet):  # the same pages with no request: the host's own noise
                time.sleep(3)
            pages: list[float] = []
            before = scrape(url)
            with OtherUser(url, pages):
                started = time.perf_counter()
                answer = httpx.post(f"{url}/libretranslate/translate", json=body, timeout=300)
                took = time.perf_counter() - started
            after = scrape(url)
            assert answer.status_code == 200, answer.text
            over = (sample(after, f"{STALL}_count") - sample(after, f"{STALL}_bucket", le="0.1")
                    - sample(before, f"{STALL}_count")
                    + sample(before, f"{STALL}_bucket", le="0.1"))
            print(f"round {n}: request {took:.2f} s; worst loop stall <= "
                  f"{worst_between(before, after) * 1000:.0f} ms ({over:.0f} over 100 ms); "
                  f"other user's page median {statistics.median(pages) * 1000:.0f} ms, "
                  f"slowest {max(pages) * 1000:.0f} ms ({len(pages)} loads; with no request: "
                  f"median {statistics.median(quiet) * 1000:.0f}, slowest "
                  f"{max(quiet) * 1000:.0f} ms); load {os.getloadavg()[0]:.2f}")
        print(f"worst stall since start: "
              f"{sample(scrape(url), 'hymt_event_loop_stall_max_seconds') * 1000:.0f} ms")


if __name__ == "__main__":
    main()
