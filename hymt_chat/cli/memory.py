"""``hymt-chat memory export|import|stats|clear``: the translation memory where the app keeps
it (a PostgreSQL ``HYMT_DATABASE_URL``, else the SQLite file ``HYMT_MEMORY_PATH``), as TMX for
another deployment or a CAT tool, and back."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from hymt_chat import __version__
from hymt_chat.cli.words import say
from hymt_chat.errors import InputError
from hymt_chat.settings import Settings

__all__ = ["add_memory_commands"]


def _store() -> Any:
    from hymt_chat.store.memory import memory_location, open_memory_store

    settings = Settings()
    return open_memory_store(memory_location(settings), max_entries=settings.memory_max_entries,
                             connect_timeout=10)


def cmd_stats(args: argparse.Namespace) -> int:
    stats = _store().stats()
    print(f"Translation memory at {stats.location}")
    for origin, label in (("corrected", "corrected by agents"), ("imported", "imported (TMX)"),
                          ("machine", "model answers")):
        print(f"  {label:<22}{stats.by_origin.get(origin, 0):>10,}")
    print(f"  {'total':<22}{stats.total:>10,} of {stats.max_entries:,} (HYMT_MEMORY_MAX_ENTRIES)")
    print(f"  {'answered from it':<22}{stats.hits:>10,} times")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from hymt_chat.store.memory import CORRECTED, IMPORTED, MACHINE
    from hymt_chat.store.tmx import write_tmx

    origins = (IMPORTED, CORRECTED, MACHINE) if args.machine else (IMPORTED, CORRECTED)
    store = _store()
    to_stdout = args.file == "-"
    target: Any = (nullcontext(sys.stdout.buffer) if to_stdout
                   else open(args.file, "wb"))  # noqa: SIM115 - closed by the with
    with target as out:
        written = write_tmx(store.entries(origins), out, tool_version=__version__)
    if not to_stdout:
        print(say("cli_tmx_written", count=written, file=args.file))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from hymt_chat.store.tmx import ReadReport, read_tmx

    path = Path(args.file)
    if not path.is_file():
        raise InputError.worded("cli_no_tmx_file", path=str(path))
    report = ReadReport()
    store = _store()
    with open(path, "rb") as source:
        added = store.add_team(read_tmx(source, report))  # one transaction: all or nothing
    print(say("cli_tmx_imported", count=added, units=report.units, store=str(store.location)))
    for reason, count in sorted(report.skipped.items()):
        print(f"  skipped {count:,}: {reason}")
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    from hymt_chat.store.memory import MACHINE, ORIGINS

    origins = ORIGINS if args.all else (MACHINE,)
    gone = _store().clear(origins)
    print(say("cli_memory_cleared_all" if args.all else "cli_memory_cleared", count=gone))
    return 0


def add_memory_commands(sub: Any) -> None:
    p = sub.add_parser("memory", help="export, import, count or clear the translation memory")
    memory = p.add_subparsers(dest="memory_command", required=True, metavar="ACTION")
    memory.add_parser("stats", help="entries by origin, and how often they answered").set_defaults(
        func=cmd_stats)
    e = memory.add_parser("export", help="the team's entries (corrections, imports) as TMX 1.4b")
    e.add_argument("file", help="the .tmx file to write ('-': standard output)")
    e.add_argument("--machine", action="store_true", help="also the model's answers (marked "
                   "x-hymt-origin=machine; an import skips them)")
    e.set_defaults(func=cmd_export)
    i = memory.add_parser("import", help="a TMX file's translations as team entries (all of "
                          "them or, on any error, none)")
    i.add_argument("file")
    i.set_defaults(func=cmd_import)
    c = memory.add_parser("clear", help="remove the model's answers (--all: every entry)")
    c.add_argument("--all", action="store_true", help="also the agents' corrections and imports")
    c.set_defaults(func=cmd_clear)
