"""The catalogs' template, extracted the way ``pybabel extract -F babel.cfg`` does: the app's
messages from its code (``N_``/``NP_``, :mod:`hymt_chat.words.source`), and Chainlit's UI strings
from its English file (:func:`chainlit`, the extraction method babel.cfg names for it). One
function builds it for the script (``scripts/catalogs.py``) and for the test that keeps the
catalogs complete (tests/test_catalogs.py)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract, extract_from_dir

__all__ = ["CHAINLIT_FILE", "KEYWORDS", "NOT_WORDS", "chainlit", "template"]

ROOT = Path(__file__).resolve().parent.parent.parent
CHAINLIT_FILE = ".chainlit/translations/en-US.json"
KEYWORDS: dict[str, Any] = {"N_": ((1, "c"), 2), "NP_": ((1, "c"), 2, 3)}
# Chainlit strings that are no words to translate: a keyboard shortcut, an example address.
NOT_WORDS = frozenset({"navigation.user.menu.settingsKey", "auth.login.form.email.placeholder"})


def _flat(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", str(value)


def chainlit(fileobj: IO[bytes], keywords: Collection[str], comment_tags: Collection[str],
             options: Mapping[str, Any]) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """Babel extraction method for Chainlit's ``en-US.json``: each UI string under the context
    ``chainlit|<its path>``."""
    del keywords, comment_tags, options
    for path, english in _flat(json.loads(fileobj.read().decode("utf-8"))):
        if path not in NOT_WORDS and english.strip():
            yield 1, "pgettext", (f"chainlit|{path}", english), []


def template(root: Path = ROOT) -> Catalog:
    """The template (``hymt.pot``) of the code and Chainlit file under *root*."""
    pot = Catalog(project="hymt-chat", msgid_bugs_address="", charset="utf-8",
                  fuzzy=False)
    keywords = {**KEYWORDS, "pgettext": ((1, "c"), 2)}
    for name, line, message, comments, context in extract_from_dir(
            str(root / "hymt_chat"), [("**.py", "python")], keywords=keywords,
            comment_tags=("TRANSLATORS:",)):
        pot.add(message, None, [(f"hymt_chat/{name}", line)], auto_comments=comments,
                context=context)
    # A hidden folder, which extract_from_dir passes over (pybabel is given the file by name).
    with (root / CHAINLIT_FILE).open("rb") as handle:
        for line, message, comments, context in extract(
                "hymt_chat.words.extract:chainlit", handle, keywords=keywords):
            pot.add(message, None, [(CHAINLIT_FILE, line)], auto_comments=comments,
                    context=context)
    return pot
