"""Everything hymt-chat writes is its owner's alone: conversations, logs, uploads, keys.

The process runs with umask 077, so files it (or Chainlit, SQLite, the log handler) creates
are 0600 and folders 0700 from the first byte; folders made before (by an older version, or
by ``make setup``) are tightened at start. Secrets are written through :func:`write_private`,
which creates the file 0600 with ``O_EXCL`` — there is no moment when another user can read it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["make_private", "write_private"]

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_private(*folders: Path) -> None:
    """Set umask 077 for this process and make *folders* (and their known children) 0700."""
    os.umask(0o077)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        for path in (folder, *(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())):
            try:
                path.chmod(DIR_MODE)
            except OSError:
                pass  # not ours (a shared mount): leave it, the files inside are still 0600


def write_private(path: Path, text: str) -> None:
    """Write *text* to *path* atomically, readable by the owner only from the start."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    tmp.replace(path)
