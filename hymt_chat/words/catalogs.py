"""The pages' words in each of the 38 languages, read from the gettext catalogs kept in the
package (``hymt_chat/locale/<locale>/LC_MESSAGES/hymt.po``), never made at page load.

A message's context is its key (``guest|send``, ``chainlit|chat.input.placeholder``); a
catalog's draft (marked fuzzy until a person reviews it) is used, since it reads better to a
customer than English. A message a catalog lacks, or leaves empty, is said in English for that
message alone (the catalog test fails on it).
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

from hymt_chat.lang.languages import LANGUAGES, find_language
from hymt_chat.words.source import GROUPS, PLURALS

__all__ = ["DOMAIN", "LOCALES", "Catalog", "catalog", "locale_of", "po_path"]

_log = logging.getLogger(__name__)
DOMAIN = "hymt"
LOCALES = Path(__file__).resolve().parent.parent / "locale"
"""The catalogs' folder (gettext's layout, one ``<locale>/LC_MESSAGES/hymt.po`` each)."""


def locale_of(code: str) -> str:
    """The gettext/CLDR locale name of a table code ("zh-Hant" -> "zh_Hant")."""
    return code.replace("-", "_")


def po_path(code: str) -> Path:
    return LOCALES / locale_of(code) / "LC_MESSAGES" / f"{DOMAIN}.po"


@dataclass(frozen=True, slots=True)
class Catalog:
    """One language's messages: {key: text} and {key: plural forms}, and its plural rule."""

    code: str
    messages: Mapping[str, str]
    plurals: Mapping[str, tuple[str, ...]]
    plural: Callable[[int], int]

    def group(self, name: str, english: Mapping[str, str] | None = None) -> dict[str, str]:
        """Every message of group *name* ({name: text}, English where this catalog has none);
        *english* is the group's source where it is not the app's (Chainlit's strings)."""
        source = GROUPS[name] if english is None else english
        return {key: self.messages.get(f"{name}|{key}") or said for key, said in source.items()}

    def text(self, key: str) -> str:
        """The chat's message *key* (``chat|<key>``), English where this catalog has none."""
        return self.messages.get(f"chat|{key}") or GROUPS["chat"][key]

    def count(self, key: str, n: int) -> str:
        """The form of plural message *key* for *n* (CLDR's rule of the language)."""
        forms = self.plurals.get(f"chat|{key}")
        if forms:
            form = forms[min(self.plural(n), len(forms) - 1)]
            if form:
                return form
        one, other = PLURALS[key]
        return one if n == 1 else other


def _english() -> Catalog:
    return Catalog("en", {}, {}, lambda n: int(n != 1))


@cache
def catalog(code: str) -> Catalog:
    """The catalog of *code* (one of the 38; anything else gets English), read once: the
    files are part of the package and never change while it runs."""
    found = find_language(code)
    if found is None or found.code == "en":
        return _english()
    path = po_path(found.code)
    try:
        with path.open("rb") as handle:
            po = read_po(handle, locale=locale_of(found.code))
    except (OSError, ValueError) as err:  # a broken file: English, said in the log
        _log.error("the catalog of %s could not be read (%s): English instead", found.code, err)
        return _english()
    messages: dict[str, str] = {}
    plurals: dict[str, tuple[str, ...]] = {}
    for message in po:
        if not message.id or not message.context:
            continue
        if isinstance(message.string, tuple):
            plurals[message.context] = tuple(message.string)
        elif isinstance(message.string, str) and message.string:
            messages[message.context] = message.string
    rule = gettext.c2py(po.plural_expr)
    return Catalog(found.code, messages, plurals, rule)


def codes() -> list[str]:
    """Every language that has a catalog (the 38 less English, the source)."""
    return [lang.code for lang in LANGUAGES if lang.code != "en"]
