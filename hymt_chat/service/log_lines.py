"""The log files' lines that hold a text (erased, exported) or are older than a time (swept).

Every file under ``<cache>/logs`` (the app's JSON lines and their rotations, the sidecar's,
the router's and each app replica's) and ``HYMT_LOG_FILE`` with its rotations. A file is
rewritten in place (read, filtered, written back, truncated), never replaced: a running app
keeps appending to the same open file. A JSON line is dated by its ``time``; a line of another
program's log has no date of its own, so such a file goes whole once it was last written
before the cut; a rotated file emptied by the sweep goes too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["erase_lines", "holding_lines", "log_files", "sweep_lines"]

_ROTATED = re.compile(r"\.\d+$")  # app.log.3: no longer written


def log_files(settings: Settings) -> list[Path]:
    """Every log file this deployment writes on this host."""
    found: set[Path] = set()
    folder = settings.cache_dir / "logs"
    if folder.is_dir():
        found |= {p for p in folder.rglob("*") if p.is_file()}
    if settings.log_file is not None:
        log = Path(settings.log_file)
        found |= {p for p in log.parent.glob(log.name + "*") if p.is_file()}
    return sorted(found)


def _holds(texts: Sequence[str]) -> Callable[[bytes], bool]:
    needles = [t.lower() for t in texts if t.strip()]
    return lambda line: any(n in line.decode("utf-8", "replace").lower() for n in needles)


def _rewrite(path: Path, drop: Callable[[bytes], bool]) -> int:
    """Drop the lines *drop* says from *path*, in place; how many went."""
    try:
        with open(path, "r+b") as file:
            lines = file.read().splitlines(keepends=True)
            kept = [line for line in lines if not drop(line)]
            if len(kept) == len(lines):
                return 0
            file.seek(0)
            file.write(b"".join(kept))
            file.truncate()
    except FileNotFoundError:  # rotated away meanwhile
        return 0
    return len(lines) - len(kept)


def holding_lines(paths: Iterable[Path], texts: Sequence[str]) -> dict[str, list[str]]:
    """The lines that hold any of *texts*, by file."""
    holds = _holds(texts)
    out: dict[str, list[str]] = {}
    for path in paths:
        try:
            lines = path.read_bytes().splitlines()
        except FileNotFoundError:
            continue
        found = [line.decode("utf-8", "replace") for line in lines if holds(line)]
        if found:
            out[str(path)] = found
    return out


def erase_lines(paths: Iterable[Path], texts: Sequence[str]) -> int:
    """Remove the lines that hold any of *texts*; how many went."""
    if not any(t.strip() for t in texts):
        return 0
    holds = _holds(texts)
    return sum(_rewrite(path, holds) for path in paths)


def _line_time(line: bytes) -> float | None:
    try:
        when = json.loads(line).get("time")
        return datetime.fromisoformat(when).timestamp() if isinstance(when, str) else None
    except (ValueError, AttributeError):
        return None


def sweep_lines(paths: Iterable[Path], before: float) -> int:
    """Remove the lines written before *before* (epoch seconds); how many went. A file whose
    lines carry no time (another program's log) goes whole once last written before the cut;
    a rotated file left empty goes too."""
    removed = 0
    for path in paths:
        try:
            lines = path.read_bytes().splitlines()
            if not any(_line_time(line) is not None for line in lines):
                if lines and path.stat().st_mtime < before:
                    path.unlink()
                    removed += len(lines)
                continue
        except FileNotFoundError:
            continue

        def old(line: bytes) -> bool:
            when = _line_time(line)
            return when is not None and when < before

        gone = _rewrite(path, old)
        removed += gone
        if gone == len(lines) and _ROTATED.search(path.name):
            path.unlink(missing_ok=True)
    return removed
