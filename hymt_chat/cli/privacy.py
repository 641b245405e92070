"""``hymt-chat forget | export | audit | retention run``: one person's data erased or
exported, the audit log read (or written as CSV), and the retention sweep run once. Each acts
on the deployment's stores as the app keeps them (``HYMT_DATABASE_URL``, the cache folder)."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hymt_chat.cli.words import say
from hymt_chat.errors import InputError
from hymt_chat.settings import Settings

__all__ = ["add_privacy_commands"]


def _subject(args: argparse.Namespace) -> Any:
    from hymt_chat.service.erasure import Subject

    for kind in ("visitor", "room", "agent", "text"):
        value = getattr(args, kind, None)
        if value is not None:
            return Subject(kind, value)
    raise InputError.worded("cli_name_whom")


def _audit(settings: Settings) -> Any:
    from hymt_chat.store.audit import open_audit_log

    return open_audit_log(settings)


def _conversations(settings: Settings) -> Any:
    """The rooms' and the desk's conversations, a holding every command searches."""
    from hymt_chat.service.conversation_records import ConversationRecords

    return ConversationRecords.for_settings(settings)


def cmd_forget(args: argparse.Namespace) -> int:
    from hymt_chat.service.erasure import erase

    settings = Settings()
    subject, audit = _subject(args), _audit(settings)
    conversations = _conversations(settings)
    try:
        report = erase(settings, subject, holdings=[conversations], audit=audit)
    finally:
        conversations.close()
    subject_said = f"{subject.kind} {subject.text!r}"
    if not report.total:
        print(say("cli_forget_nothing", subject=subject_said))
        return 0
    print(say("cli_forget_removed", subject=subject_said))
    print("\n".join(report.lines()[1:]))  # the counts, under the sentence
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from hymt_chat.modes.profiles import saved_markdown
    from hymt_chat.service.export import export_person

    settings = Settings()
    subject = _subject(args)
    out = Path(args.out)
    audit = _audit(settings)
    conversations = _conversations(settings)
    try:
        result = export_person(settings, subject, out, holdings=[conversations], audit=audit,
                               conversation=saved_markdown)
    finally:
        conversations.close()
    if not result.total:
        print(say("cli_export_nothing", subject=f"{subject.kind} {subject.text!r}",
                  file=str(out)))
        return 0
    print(say("cli_export_wrote", file=str(out)))
    for what, n in result.counts.items():
        if n:
            print(f"  {what:<28}{n:>8,}")
    return 0


def _moment(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InputError.worded("cli_not_a_date", value=value) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def cmd_audit(args: argparse.Namespace) -> int:
    from hymt_chat.store.audit import subject_label, write_csv

    subject = None
    for kind in ("visitor", "room", "agent", "text"):
        value = getattr(args, kind, None)
        if value is not None:
            label = subject_label(kind, value.strip())
            # A visitor or a text is found by its hash (the label's first two words).
            subject = label if kind in ("room", "agent") else " ".join(label.split(" ")[:2])
    entries = _audit(Settings()).entries(since=_moment(args.since), until=_moment(args.until),
                                          actor=args.actor, action=args.action, subject=subject)
    if args.csv:
        if args.csv == "-":
            write_csv(entries, sys.stdout)
        else:
            with open(args.csv, "w", newline="", encoding="utf-8") as out:
                count = write_csv(entries, out)
            print(say("cli_audit_written", count=count, file=args.csv))
        return 0
    if not entries:
        print(say("cli_audit_none"))
    for e in entries:
        print(f"{e.when}  {e.actor:<20} {e.action:<10} {e.subject}"
              + (f"  ({e.detail})" if e.detail else ""))
    return 0


def cmd_retention_run(args: argparse.Namespace) -> int:
    from hymt_chat.service.retention import Retention, sweep

    settings = Settings()
    policy = Retention.of(settings)
    if not policy.active:
        print(say("cli_retention_off"))
        return 0
    audit = _audit(settings)
    conversations = _conversations(settings)
    try:
        removed = sweep(settings, now=time.time(), holdings=[conversations], audit=audit)
    finally:
        conversations.close()
    kept = [kind for kind, days in policy.days.items() if not days]
    if any(removed.values()):
        print(say("cli_retention_removed"))
        for what, n in removed.items():
            if n:
                print(f"  {what:<32}{n:>8,}")
    else:
        print(say("cli_retention_nothing"))
    if kept:
        print(say("cli_retention_unlimited", kinds=", ".join(kept)))
    return 0


def _whom(p: argparse.ArgumentParser, *, required: bool) -> None:
    group = p.add_mutually_exclusive_group(required=required)
    group.add_argument("--visitor", metavar="ID", help="a desk visitor")
    group.add_argument("--room", metavar="TOKEN", help="a room (its link's token)")
    group.add_argument("--agent", metavar="NAME", help="an agent's sign-in name")
    group.add_argument("--text", metavar="TEXT", help="anything they wrote: an e-mail address, "
                       "a phone number")


def add_privacy_commands(sub: Any) -> None:
    p = sub.add_parser("forget", help="erase every trace of a visitor, room, agent or text "
                       "(history, files, memory, logs); says what went")
    _whom(p, required=True)
    p.set_defaults(func=cmd_forget)

    p = sub.add_parser("export", help="one person's data as a zip of JSON and a transcript")
    _whom(p, required=True)
    p.add_argument("--out", required=True, metavar="FILE.zip")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("audit", help="who read, exported, corrected, erased or took over what")
    p.add_argument("--since", metavar="DATE", help="from this UTC date or time (ISO 8601)")
    p.add_argument("--until", metavar="DATE", help="before this UTC date or time")
    p.add_argument("--actor", metavar="WHO", help="agent:NAME or command:NAME")
    p.add_argument("--action", choices=("read", "export", "correct", "erase", "take_over",
                                        "retention"))
    _whom(p, required=False)
    p.add_argument("--csv", metavar="FILE", help="write CSV to FILE ('-': standard output)")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("retention", help="remove what is older than HYMT_RETENTION_*_DAYS")
    r = p.add_subparsers(dest="retention_command", required=True, metavar="ACTION")
    r.add_parser("run", help="sweep once and say what was removed").set_defaults(
        func=cmd_retention_run)
