#!/usr/bin/env python3
"""Keep the message catalogs (hymt_chat/locale) in step with the code.

  scripts/catalogs.py extract        write hymt_chat/locale/hymt.pot from the code and Chainlit
  scripts/catalogs.py update         bring every language's hymt.po in step with the template
  scripts/catalogs.py check          every message in every language, placeholders kept
  scripts/catalogs.py todo CODE      the messages CODE lacks, as JSON {key: English}
  scripts/catalogs.py apply CODE F   put F's {key: text} (or {key: [forms]}) into CODE's catalog,
                                     marked fuzzy (a draft), after the placeholder check
  scripts/catalogs.py draft CODE     translate what CODE lacks with the model (HYMT_BASE_URL)
                                     through the app's own checks, marked fuzzy

A reviewer removes the fuzzy mark of the messages they have read (Poedit, Weblate, Lokalize).
"""

from __future__ import annotations

import asyncio
import json
import sys
from io import BytesIO
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hymt_chat.words.catalogs import LOCALES, codes, locale_of, po_path
from hymt_chat.words.checks import problems
from hymt_chat.words.extract import template

POT = LOCALES / "hymt.pot"


def _write(path: Path, po: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = BytesIO()
    write_po(buffer, po, width=100, omit_header=False, ignore_obsolete=True,
             include_previous=False)
    path.write_bytes(buffer.getvalue())


def _read(code: str) -> Catalog:
    path = po_path(code)
    if not path.exists():
        return Catalog(locale=locale_of(code), project="hymt-chat", fuzzy=False)
    with path.open("rb") as handle:
        return read_po(handle, locale=locale_of(code))


def extract() -> None:
    _write(POT, template())


def update() -> None:
    pot = template()
    for code in codes():
        po = _read(code)
        po.update(pot, no_fuzzy_matching=True, update_header_comment=False)
        po.fuzzy = False
        _write(po_path(code), po)


def check() -> int:
    pot = template()
    found = 0
    for code in codes():
        po = _read(code)
        for said in problems(pot, po):
            print(f"{code}: {said}")
            found += 1
        write_mo(BytesIO(), po, use_fuzzy=True)  # compiles, as msgfmt would
    print(f"{found} problem(s) in {len(codes())} catalogs")
    return 1 if found else 0


def todo(code: str) -> None:
    po = _read(code)
    lacking: dict[str, object] = {}
    for message in template():
        if not message.id:
            continue
        have = po.get(message.id, context=message.context)
        string = have.string if have is not None else None
        if not string or (isinstance(string, tuple) and not all(string)):
            lacking[str(message.context)] = (list(message.id) if isinstance(message.id, tuple)
                                             else message.id)
    print(json.dumps(lacking, ensure_ascii=False, indent=1))


def apply(code: str, path: str, *, flag: str = "fuzzy") -> int:
    po = _read(code)
    said = json.loads(Path(path).read_text("utf-8"))
    bad = 0
    for message in template():
        if not message.id or message.context not in said:
            continue
        value = said[message.context]
        string = tuple(value) if isinstance(value, list) else value
        if isinstance(message.id, tuple) != isinstance(string, tuple):
            print(f"{code}: {message.context}: give "
                  f"{'a list of plural forms' if isinstance(message.id, tuple) else 'one text'}")
            bad += 1
            continue
        trial = Message(message.id, string, context=message.context)
        wrong = problems(_one(message), _one(trial, code))
        if wrong:
            print(f"{code}: {message.context}: {'; '.join(wrong)}")
            bad += 1
            continue
        have = po.get(message.id, context=message.context)
        if have is None:
            po.add(message.id, string, context=message.context, flags=[flag] if flag else [])
        else:
            have.string = string
            if flag:
                have.flags.add(flag)
    _write(po_path(code), po)
    return 1 if bad else 0


def _one(message: Message, code: str | None = None) -> Catalog:
    single = Catalog(locale=locale_of(code) if code else None, fuzzy=False)
    single[message.id] = message
    return single


async def draft(code: str) -> int:
    """The model's words for what *code* lacks, checked like any translation, marked fuzzy."""
    from hymt_chat.engine.priority import BULK
    from hymt_chat.engine.translator import Translator
    from hymt_chat.errors import HymtError
    from hymt_chat.settings import Settings

    translator = Translator(Settings())
    out: dict[str, object] = {}
    po = _read(code)
    for message in template():
        if not message.id or (po.get(message.id, context=message.context) or Message("")).string:
            continue
        forms = list(message.id) if isinstance(message.id, tuple) else [message.id]
        said = []
        for text in forms:
            try:
                result = await translator.translate(text, code, "en", user="catalogs",
                                                             klass=BULK)
            except HymtError as err:
                print(f"{code}: {message.context}: not translated ({err})")
                break
            if result.warnings:
                print(f"{code}: {message.context}: held ({'; '.join(result.warnings)})")
                break
            said.append(result.text)
        else:
            out[str(message.context)] = said if isinstance(message.id, tuple) else said[0]
    drafts = Path(f"/tmp/hymt-drafts-{code}.json")
    drafts.write_text(json.dumps(out, ensure_ascii=False), "utf-8")
    return apply(code, str(drafts))


def main(argv: list[str]) -> int:
    match argv:
        case ["extract"]:
            extract()
        case ["update"]:
            update()
        case ["check"]:
            return check()
        case ["todo", code]:
            todo(code)
        case ["apply", code, path]:
            return apply(code, path)
        case ["apply", code, path, "--reviewed"]:
            return apply(code, path, flag="")
        case ["draft", code]:
            return asyncio.run(draft(code))
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
