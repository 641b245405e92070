"""The guest pages' words in the guest's language: by hand for the common ones
(:mod:`~hymt_chat.modes.guest_words`), and for the other of the 38 the model translates the
English words once, checks them and keeps them on disk (``<cache>/page-words/<code>.json``), so
that a deployment asks the model once per language, not once per guest.

The check: each word is non-empty, one line, not wildly longer than its English, and all of
them together read as the language they were asked in (our detector). A set that fails is used
for the pages of the next ten minutes (its failed words in English) and not kept; then the model
is asked again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Mapping
from pathlib import Path

from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError
from hymt_chat.lang.detect import detect_language
from hymt_chat.lang.endonyms import endonym, names_in
from hymt_chat.lang.languages import LANGUAGES, find_language
from hymt_chat.modes.guest_words import ENGLISH, STATIC

__all__ = ["PageWords", "check_words", "page_config", "text_direction"]

_log = logging.getLogger(__name__)
_RTL = frozenset({"ar", "fa", "he", "ur", "ug"})
_SLOT = re.compile(r"\{\{\s*\w+\s*\}\}")  # i18next's interpolation: "Continue with {{provider}}"
_RETRY_SECONDS = 600.0  # a set that failed its check is asked again after this long
# Languages our detector may name for one another's short texts.
_KIN = [frozenset({"zh", "zh-Hant", "yue"}), frozenset({"ms", "id"})]


def text_direction(code: str) -> str:
    return "rtl" if code in _RTL else "ltr"


def _kin(a: str | None, b: str) -> bool:
    return a == b or any(a in group and b in group for group in _KIN)


def _slots(text: str) -> list[str]:
    return sorted(_SLOT.findall(text))


def check_words(code: str, words: Mapping[str, str],
                english: Mapping[str, str] = ENGLISH) -> dict[str, str]:
    """The words of *words* (model translations of *english* into *code*) that pass; an empty
    dict when the set as a whole does not read as *code*. A word keeps its English's
    ``{{slots}}`` (what the page fills in) exactly."""
    good = {}
    for key, source in english.items():
        said = (words.get(key) or "").strip()
        if (said and "\n" not in said and len(said) <= 4 * len(source) + 20
                and (said != source or len(source.split()) == 1)
                and _slots(said) == _slots(source)):
            good[key] = said
    together = " ".join(good.values())
    if not good or not _kin(detect_language(together), code):
        return {}
    return good


class PageWords:
    """Every language's page words, from the table, the disk, or the model (once). The guest
    pages' words by default; another page passes its own English and hand-written tables."""

    def __init__(self, translator: Translator | None, folder: Path,
                 wait_seconds: float = 20.0, *, english: Mapping[str, str] = ENGLISH,
                 static: Mapping[str, Mapping[str, str]] = STATIC) -> None:
        self.translator = translator
        self.folder = folder
        self.english = dict(english)
        # A page waits this long for its words; past it the page is English this once, and the
        # words, still asked, are kept for the next page (a busy model holds no guest's page).
        self.wait_seconds = wait_seconds
        self._known: dict[str, dict[str, str]] = {k: dict(v) for k, v in static.items()}
        self._asking: dict[str, asyncio.Task[tuple[str, dict[str, str]]]] = {}
        # A set that failed its check is not asked again for a while: an anonymous page must
        # not make the model translate the words over and over (what it got is used meanwhile).
        self._failed: dict[str, tuple[float, tuple[str, dict[str, str]]]] = {}

    def known(self, code: str) -> dict[str, str] | None:
        """The words of *code* without asking the model: the table's or those kept on disk."""
        if code in self._known:
            return self._known[code]
        path = self.folder / f"{code}.json"
        try:
            kept = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict) or set(kept) != set(self.english):
            return None  # an older page's words: asked again
        self._known[code] = {k: str(v) for k, v in kept.items()}
        return self._known[code]

    async def words(self, code: str | None,
                    wait: float | None = None) -> tuple[str, dict[str, str]]:
        """(the page's language, its words) for a guest whose language is *code*: English
        for an unknown code or when the model cannot say them now (within *wait* seconds,
        else the page's wait; the words asked are kept for the next page either way)."""
        found = find_language(code) if isinstance(code, str) else None
        if found is None:
            return "en", self.english
        code = found.code
        if (ready := self.known(code)) is not None:
            return code, ready
        if self.translator is None:
            return "en", self.english
        failed = self._failed.get(code)
        if failed is not None and time.monotonic() - failed[0] < _RETRY_SECONDS:
            return failed[1]
        task = self._asking.get(code)
        if task is None:  # one question per language, whatever the pages waiting for it
            task = asyncio.get_running_loop().create_task(self._asked(code))
            self._asking[code] = task
            task.add_done_callback(lambda _: self._asking.pop(code, None))
        try:
            return await asyncio.wait_for(asyncio.shield(task),
                                          self.wait_seconds if wait is None else wait)
        except TimeoutError:
            return "en", self.english

    async def _asked(self, code: str) -> tuple[str, dict[str, str]]:
        """The model's words for *code*, checked; kept when all of them pass."""
        asked = await self._ask(code)
        good = check_words(code, asked, self.english)
        if len(good) == len(self.english):
            self._keep(code, good)
            return code, good
        _log.warning("page words for %s failed the check (%d of %d passed): not kept",
                     code, len(good), len(self.english))
        said = (code, {**self.english, **good}) if good else ("en", self.english)
        self._failed[code] = (time.monotonic(), said)
        return said

    async def _ask(self, code: str) -> dict[str, str]:
        assert self.translator is not None
        translator = self.translator

        async def one(text: str) -> str:
            try:
                result = await translator.translate(text, code, "en", user="page-words",
                                                    klass=BULK)
            except HymtError as err:
                _log.warning("page word not translated into %s: %s", code, err)
                return ""
            return "" if result.warnings else result.text

        said = await asyncio.gather(*(one(text) for text in self.english.values()))
        return dict(zip(self.english, said, strict=True))

    def _keep(self, code: str, words: dict[str, str]) -> None:
        self._known[code] = words
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{code}.json"
            temp = path.with_suffix(".tmp")
            temp.write_text(json.dumps(words, ensure_ascii=False, indent=1), "utf-8")
            temp.replace(path)
        except OSError:
            _log.exception("could not keep the page words of %s", code)


def page_config(code: str, words: dict[str, str]) -> dict[str, object]:
    """What a page's script needs to speak *code*: its words, its direction, every language
    named in it (the messages' "→ 英語"), and the picker's labels (endonyms)."""
    return {"lang": code, "dir": text_direction(code), "words": words,
            "names": names_in(code),
            "languages": [{"code": lang.code, "label": endonym(lang.code)}
                          for lang in LANGUAGES]}
