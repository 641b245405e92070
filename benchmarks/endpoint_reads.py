"""What finding the model server costs before each model call: ``Translator.client`` with a
sidecar state file present (no model server needed).

Counts the state-file reads and times the call; the file is read once, and again only when
it changes (see ``hymt_chat.sidecar.endpoint``).

    .venv/bin/python benchmarks/endpoint_reads.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, state_file, write_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    settings = Settings(base_url=None, cache_dir=Path(tempfile.mkdtemp()), port=8123)
    write_state(settings, Endpoint("http://127.0.0.1:8123/v1", "key", "m"), os.getpid())
    path = state_file(settings)
    reads = 0
    real = Path.read_text

    def counting(self: Path, *a: object, **k: object) -> str:
        nonlocal reads
        reads += self == path
        return real(self, *a, **k)  # type: ignore[arg-type]

    Path.read_text = counting  # type: ignore[method-assign]
    translator = Translator(settings)  # its own client: the endpoint read afresh
    per_call = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(args.calls):
            translator.client  # noqa: B018 - the property is what is measured
        per_call.append((time.perf_counter() - start) / args.calls * 1e6)
    calls = args.calls * args.rounds
    print(f"Translator.client: {reads} state-file reads for {calls:,} calls; "
          f"median {statistics.median(per_call):.1f} µs per call over {args.rounds} rounds")


if __name__ == "__main__":
    main()
