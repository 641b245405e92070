"""``hymt-chat api-key create|list|revoke|import``: the keys of the LibreTranslate/DeepL API, where
the app reads them (a PostgreSQL ``HYMT_DATABASE_URL``, else the SQLite file); ``import`` copies
an older SQLite key file there."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hymt_chat.cli.words import say
from hymt_chat.settings import Settings

__all__ = ["add_api_key_commands"]


def _store(args: argparse.Namespace) -> Any:
    from hymt_chat.api.keys import open_store, store_location

    return open_store(store_location(Settings()))


def cmd_create(args: argparse.Namespace) -> int:
    store = _store(args)
    per_minute = args.per_minute or Settings().api_per_minute
    key = store.create(args.name, per_minute=per_minute, chars_per_month=args.chars_per_month)
    print(key)  # alone on stdout: `KEY=$(hymt-chat api-key create weblate)`
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    keys = _store(args).list()
    if not keys:
        print(say("cli_no_api_keys"))
        return 0
    print(f"{'name':<24}{'state':<10}{'per minute':>11}{'chars this month':>20}  created")
    for key in keys:
        quota = f"{key.used_this_month:,}" + (f" / {key.chars_per_month:,}"
                                              if key.chars_per_month else "")
        created = datetime.fromtimestamp(key.created, UTC).strftime("%Y-%m-%d")
        state = "active" if key.active else "revoked"
        print(f"{key.name:<24}{state:<10}{key.per_minute:>11}{quota:>20}  {created}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    _store(args).revoke(args.name)
    print(say("cli_key_revoked", name=args.name))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from hymt_chat.api.keys import ApiKeyError, KeyStore

    source = Path(args.file)
    if not source.is_file():
        raise ApiKeyError.worded("cli_no_key_file", path=str(source))
    store = _store(args)
    if store.path is not None and store.path.resolve() == source.resolve():
        raise ApiKeyError.worded("cli_keys_already_there", path=str(source))
    copied, skipped = store.copy_from(KeyStore(source))
    print(say("cli_keys_copied", count=len(copied), store=str(store.location),
              names=", ".join(copied)) if copied
          else say("cli_keys_none_copied", store=str(store.location)))
    if skipped:
        print(say("cli_keys_skipped", names=", ".join(skipped)))
    return 0


def add_api_key_commands(sub: Any) -> None:
    p = sub.add_parser("api-key", help="create, list or revoke keys of the HTTP API")
    keys = p.add_subparsers(dest="api_key_command", required=True, metavar="ACTION")
    c = keys.add_parser("create", help="make a key; prints it alone on stdout (shown once)")
    c.add_argument("name")
    c.add_argument("--chars-per-month", type=int, metavar="N", help="monthly character quota")
    c.add_argument("--per-minute", type=int, metavar="N",
                   help="requests per minute (default HYMT_API_PER_MINUTE, 60)")
    c.set_defaults(func=cmd_create)
    keys.add_parser("list", help="names, limits and this month's use").set_defaults(
        func=cmd_list)
    r = keys.add_parser("revoke", help="refuse a key from now on")
    r.add_argument("name")
    r.set_defaults(func=cmd_revoke)
    i = keys.add_parser("import", help="copy the keys, usage and glossaries of a SQLite key "
                        "file (api-keys.db) to where keys live now (a PostgreSQL database)")
    i.add_argument("file")
    i.set_defaults(func=cmd_import)
