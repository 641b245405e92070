"""The guest pages' words: every language has every word, from its catalog, languages are
named by CLDR, and a page never waits on the model for its words."""

from __future__ import annotations

import re

import httpx

from hymt_chat.lang.endonyms import endonym, name_in
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import GUEST as ENGLISH
from tests.support.tabs import app


def test_every_language_says_every_word_and_japanese_borrows_no_english_or_chinese():
    for lang in LANGUAGES:
        words = catalog(lang.code).group("guest")
        assert set(words) == set(ENGLISH), lang.code
        assert all(value.strip() for value in words.values()), lang.code
    japanese = " ".join(re.sub(r"PNG|JPEG|WebP", "", v)
                        for v in catalog("ja").group("guest").values())
    assert not re.search(r"[A-Za-z]", japanese)
    chinese_only = {v for v in catalog("zh").group("guest").values()
                    if v not in catalog("ja").group("guest").values()}
    assert not any(value in japanese for value in chinese_only)


def test_languages_are_named_in_themselves_and_in_the_reader_s_language():
    assert endonym("es") == "Español" and endonym("ja") == "日本語"
    assert endonym("zh-Hant") == "中文 (繁體)" and endonym("tl") == "Filipino"
    assert name_in("en", "ja") == "英語" and name_in("es", "de") == "Spanisch"


def test_a_page_in_any_language_is_served_from_its_catalog_without_the_model(tmp_path):
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return "EN:" + prompt[-40:]

    with app(tmp_path, answer=answer) as (url, _):
        thai = httpx.get(f"{url}/room/words/th", timeout=60).json()
        assert thai["lang"] == "th" and thai["words"] == catalog("th").group("guest")
        assert thai["names"]["en"] == "อังกฤษ" and thai["dir"] == "ltr"
        arabic = httpx.get(f"{url}/room/words/ar", timeout=60).json()
        assert arabic["dir"] == "rtl" and arabic["words"]["send"] != ENGLISH["send"]
        assert httpx.get(f"{url}/room/words/xx", timeout=60).status_code == 404
    assert asked == []
