"""The guest pages' words: the hand-written tables are whole, languages are named by CLDR, and
for a language outside the tables the model's words are checked, kept on disk and asked once.

The model is the instant stand-in of ``tests/support/tabs.py``: it judges the contract (what is
asked, kept, refused), not the quality of a translation."""

from __future__ import annotations

import json
import re

import httpx

from hymt_chat.lang.endonyms import endonym, name_in
from hymt_chat.modes.guest_words import ENGLISH, STATIC
from hymt_chat.room.words import check_words
from tests.support.tabs import app


def test_every_table_says_every_word_and_japanese_borrows_no_english_or_chinese():
    for code, words in STATIC.items():
        assert set(words) == set(ENGLISH), code
        assert all(value.strip() for value in words.values()), code
    japanese = " ".join(STATIC["ja"].values())
    assert not re.search(r"[A-Za-z]", japanese)
    chinese_only = {v for v in STATIC["zh"].values() if v not in STATIC["ja"].values()}
    assert not any(value in japanese for value in chinese_only)


def test_languages_are_named_in_themselves_and_in_the_reader_s_language():
    assert endonym("es") == "Español" and endonym("ja") == "日本語"
    assert endonym("zh-Hant") == "中文 (繁體)" and endonym("tl") == "Filipino"
    assert name_in("en", "ja") == "英語" and name_in("es", "de") == "Spanisch"


def test_the_check_refuses_words_in_another_language_and_keeps_good_ones():
    assert check_words("es", dict(STATIC["es"])) == STATIC["es"]
    assert check_words("th", dict(ENGLISH)) == {}  # "translated" as English: refused whole
    broken = {**STATIC["fr"], "send": "", "title": "Conversation\navec"}
    assert set(ENGLISH) - set(check_words("fr", broken)) == {"send", "title"}


THAI = "ข้อความภาษาไทย"  # short: within the check's length bound of every word


def test_a_language_outside_the_tables_is_asked_of_the_model_once_and_kept(tmp_path):
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return THAI if "Thai" in prompt or "泰语" in prompt else "EN:" + prompt[-40:]

    with app(tmp_path, answer=answer) as (url, _):
        first = httpx.get(f"{url}/room/words/th", timeout=60).json()
        assert first["lang"] == "th" and first["words"]["send"] == THAI
        assert first["names"]["en"] == "อังกฤษ" and first["dir"] == "ltr"
        kept = json.loads((tmp_path / "cache" / "page-words" / "th.json").read_text("utf-8"))
        assert set(kept) == set(ENGLISH)
        calls = len(asked)
        assert calls >= len(ENGLISH)
        again = httpx.get(f"{url}/room/words/th", timeout=60).json()
        assert again["words"] == first["words"] and len(asked) == calls  # from what was kept
        # Khmer answered in something else: the check refuses it, the page stays English and
        # nothing is kept (the model is asked again later, not at every page).
        khmer = httpx.get(f"{url}/room/words/km", timeout=60).json()
        assert khmer["lang"] == "en" and khmer["words"] == ENGLISH
        assert not (tmp_path / "cache" / "page-words" / "km.json").exists()
        calls = len(asked)
        httpx.get(f"{url}/room/words/km", timeout=60)  # not asked again at once
        assert len(asked) == calls
        assert httpx.get(f"{url}/room/words/xx", timeout=60).status_code == 404


async def test_a_page_does_not_wait_on_a_busy_model_and_the_words_are_kept_for_the_next(
        tmp_path):
    """The model answers (Thai) slower than the page waits: that page is English, the words are
    still asked once, checked and kept, and the next page has them."""
    import asyncio
    import time as clock

    from hymt_chat.room.words import PageWords
    from tests.support.sessions import services
    from tests.support.stub_model import StubModel

    def slow(prompt: str) -> str:
        clock.sleep(1)  # the stand-in model, busy: longer than the page waits
        return THAI

    with StubModel(answer=slow) as stub:
        words = PageWords(services(stub, tmp_path).translator, tmp_path / "page-words",
                          wait_seconds=0.5)
        assert await words.words("th") == ("en", ENGLISH)
        while words._asking:  # the question goes on without the page
            await asyncio.sleep(0.2)
        assert await words.words("th") == ("th", {key: THAI for key in ENGLISH})
        assert (tmp_path / "page-words" / "th.json").exists()
