"""Print the test command's budget: its total time and its 20 slowest tests.

Read from the JUnit reports pytest wrote (a test's time there covers its setup, call and
teardown, so a module fixture's start-up is charged to the module's first test).
"""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

BUDGET = 20 * 60  # seconds: a clean clone's whole `make test` on 2 cores, setup included
SHOWN = 20


def main(started: float, reports: list[Path]) -> None:
    cases: list[tuple[float, str]] = []
    for report in reports:
        if not report.exists():  # a run that could not start wrote none
            continue
        for case in ET.parse(report).iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            cases.append((float(case.get("time") or 0), name))
    total = time.time() - started
    print(f"\nThe {SHOWN} slowest of {len(cases)} tests:")
    for seconds, name in sorted(cases, reverse=True)[:SHOWN]:
        print(f"{seconds:8.1f} s  {name}")
    minutes, seconds = divmod(round(total), 60)
    print(f"The test command took {minutes} min {seconds:02d} s (its budget, setup included:"
          f" {BUDGET // 60} min).")


if __name__ == "__main__":
    main(float(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
