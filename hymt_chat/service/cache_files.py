"""Files in the cache folder that hold a person's data: Chainlit's uploads (a session's folder
under ``chainlit-files``, a photo among them) and any other file holding a text.

A session's folder goes whole: it is one tab's uploads, and a file that holds the text (a
pasted document) or a thread that was erased (its session id) says whose tab it was; a photo
has no text to search, and goes with its folder. The folders the other modules own are not
searched here: the databases (erased by SQL, their files scrubbed), the logs
(:mod:`hymt_chat.service.log_lines`), the models, the run state and the page's words.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hymt_chat.service.web import FILES_ROOT

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["erase_files", "files_holding", "session_folders", "sweep_uploads"]

_NOT_SEARCHED = frozenset({"logs", "models", "run", "page-words"})
_DATABASE_SUFFIXES = (".db", ".db-wal", ".db-shm", ".db-journal")
_LARGEST = 64 * 1024 * 1024  # a bigger file is no upload the app keeps (the demo model's GGUF)


def _uploads(settings: Settings) -> Path:
    return settings.cache_dir / FILES_ROOT


def session_folders(settings: Settings, sessions: Iterable[str]) -> list[Path]:
    """The upload folders of Chainlit sessions *sessions* (in any process's folder)."""
    root = _uploads(settings)
    wanted = {s for s in sessions if s and "/" not in s and not s.startswith(".")}
    if not wanted or not root.is_dir():
        return []
    return sorted(p for proc in root.iterdir() if proc.is_dir()
                  for p in proc.iterdir() if p.is_dir() and p.name in wanted)


def _searched(settings: Settings) -> Iterator[Path]:
    root = settings.cache_dir
    if not root.is_dir():
        return
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if here == root:
            dirs[:] = [d for d in dirs if d not in _NOT_SEARCHED]
        for name in files:
            path = here / name
            if name.endswith(_DATABASE_SUFFIXES) or name == ".lock":
                continue
            try:
                if path.is_file() and path.stat().st_size <= _LARGEST:
                    yield path
            except OSError:
                continue


def _owner_folder(settings: Settings, path: Path) -> Path:
    """An upload's session folder, else the file itself."""
    try:
        parts = path.relative_to(_uploads(settings)).parts
    except ValueError:
        return path
    return _uploads(settings) / parts[0] / parts[1] if len(parts) >= 3 else path


def files_holding(settings: Settings, texts: Sequence[str]) -> list[Path]:
    """What to remove for *texts*: each file that holds one (UTF-8 or UTF-16, any case of
    ASCII letters), or its whole session folder when it is an upload."""
    needles = [t for t in texts if t.strip()]
    if not needles:
        return []
    patterns = {form for t in needles for form in
                (t.encode(), t.lower().encode(), t.encode("utf-16-le"),
                 t.lower().encode("utf-16-le"))}
    found: set[Path] = set()
    for path in _searched(settings):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        lowered = data.lower()
        if any(p in data or p in lowered for p in patterns):
            found.add(_owner_folder(settings, path))
    return sorted(found)


def erase_files(paths: Iterable[Path]) -> int:
    """Remove files and folders; how many files went."""
    count = 0
    for path in paths:
        if path.is_dir():
            count += sum(1 for p in path.rglob("*") if p.is_file())
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink(missing_ok=True)
            count += 1
    return count


def sweep_uploads(settings: Settings, before: float) -> int:
    """Remove the upload folders whose newest file was written before *before*; how many
    files went."""
    root = _uploads(settings)
    if not root.is_dir():
        return 0
    old: list[Path] = []
    for proc in (p for p in root.iterdir() if p.is_dir()):
        for folder in (p for p in proc.iterdir() if p.is_dir()):
            times = [p.stat().st_mtime for p in folder.rglob("*") if p.is_file()]
            if max(times, default=folder.stat().st_mtime) < before:
                old.append(folder)
    return erase_files(old)
