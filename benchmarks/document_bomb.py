"""How fast, and in how much memory, a 50 MB decompression bomb is refused.

    .venv/bin/python benchmarks/document_bomb.py

Builds three ~50 MB ``.docx`` bombs in memory, each refused in a fresh child process (so its peak
memory is its own): *honest*, 12 entries each declaring and holding 4 GiB of zeros (48 GiB in
all), *lying*, one entry holding 50 GiB of zeros that declares 1 KiB, and *lying_at_cap*, the
same declaring 63 MiB (just under the 64 MiB cap: the most a bomb can make the reader inflate). A bomb is raw deflate
blocks of zeros flushed with Z_FULL_FLUSH, so one block is made once and repeated (RFC 1951
§3.2.3: a stored-history-free block inflates the same wherever it stands). Prints the seconds
``load_document`` took, the child's RSS before the call (the interpreter, the app's modules and
the bomb's own 50 MB) and its peak during the call (Linux's VmHWM, reset just before through
``/proc/self/clear_refs``): ``added_mb`` is what refusing cost.
"""

from __future__ import annotations

import json
import multiprocessing
import struct
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHUNK = 64 * 1024 * 1024


def _deflated_zeros(chunks: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(b"\0" * CHUNK) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(b"\0" * CHUNK) + c.flush(zlib.Z_FULL_FLUSH)
    return head + block * (chunks - 2) + c.compress(b"\0" * CHUNK) + c.flush()


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    """A zip of raw deflate *entries* (name, data, declared size); CRCs are left 0: the point
    is what the reader does before it could check one."""
    out, central = bytearray(), bytearray()
    for name, data, size in entries:
        raw = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, 0, len(data),
                           size, len(raw), 0) + raw + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, 0,
                               len(data), size, len(raw), 0, 0, 0, 0, 0, offset) + raw
    start = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries),
                                 len(central), start, 0)
    return bytes(out)


def bombs() -> dict[str, bytes]:
    four_gib = _deflated_zeros(64)  # 64 x 64 MiB = 4 GiB of zeros, ~4 MB deflated
    honest = [(f"word/media/part{i}.xml", four_gib, 0xFFFFFFFF) for i in range(12)]
    honest.append(("word/document.xml", zlib.compress(b"<x/>")[2:-4], 4))
    zeros = _deflated_zeros(800)  # 50 GiB of zeros, ~50 MB deflated
    return {"honest": _zip(honest),
            "lying": _zip([("word/document.xml", zeros, 1024)]),  # declares 1 KiB
            # the worst a liar gets: declaring just under the cap, it is inflated up to there
            "lying_at_cap": _zip([("word/document.xml", zeros, 63 * 1024 * 1024)])}


def _refuse(data: bytes, queue: multiprocessing.Queue) -> None:
    from hymt_chat.modes.documents import load_document

    Path("/proc/self/clear_refs").write_text("5")  # Linux: reset the peak (VmHWM) to now
    before = _status("VmRSS")
    started = time.perf_counter()
    try:
        load_document("bomb.docx", data, max_bytes=len(data) + 1)
        outcome = "ACCEPTED"
    except Exception as err:  # noqa: BLE001 - the refusal is what is measured
        outcome = f"{type(err).__name__}: {err}"
    seconds = time.perf_counter() - started
    peak = _status("VmHWM")
    queue.put({"seconds": round(seconds, 3), "rss_before_mb": round(before / 1024, 1),
               "rss_peak_mb": round(peak / 1024, 1),
               "added_mb": round((peak - before) / 1024, 1), "outcome": outcome})


def _status(field: str) -> int:
    """A field of /proc/self/status in KiB (VmRSS now, VmHWM the peak since the reset)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def main() -> None:
    ctx = multiprocessing.get_context("spawn")
    for name, data in bombs().items():
        queue = ctx.Queue()
        child = ctx.Process(target=_refuse, args=(data, queue))
        child.start()
        result = queue.get()
        child.join()
        print(json.dumps({"bomb": name, "file_mb": round(len(data) / 1e6, 1), **result}))


if __name__ == "__main__":
    main()
