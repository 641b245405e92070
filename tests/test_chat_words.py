"""The chat page speaks one language: the reader's choice, else the browser's, for any of the
38. Chainlit's UI strings and the app's words come from the same language, from the catalogs
(tests/test_catalogs.py keeps them whole), the profiles, starters, pickers and readme follow
it, and languages are named in it (CLDR). No word is made by the model at page load.

The page itself, in Chromium: tests/test_chat_language_browser.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from pathlib import Path

import httpx
import pytest

from hymt_chat.lang.languages import LANGUAGES, find_language
from hymt_chat.lang.page_locale import CHAINLIT_TAGS, chainlit_tag, page_language
from hymt_chat.modes.page_text import PAGE_LANGUAGE, STARTERS, PageText
from hymt_chat.modes.profiles import PROFILES
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.room.chat_words import COOKIE, flat, nested
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import CHAT as ENGLISH
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel
from tests.support.tabs import Tab, app

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / ".chainlit" / "translations"
SHIPPED = Path(importlib.util.find_spec("chainlit").origin).parent / "translations"


@pytest.mark.parametrize(("choice", "browser", "accept", "page"), [
    (None, "fr-FR", None, "fr"),
    (None, "ja-JP", "ja-JP,ja;q=0.9", "ja"),
    (None, "zh-TW", None, "zh-Hant"),
    (None, "nb-NO", "nb-NO,nb;q=0.9,de;q=0.8", "de"),  # Norwegian: the next the browser lists
    ("es", "fr-FR", "fr-FR", "es"),  # the reader's choice first
    ("xx", "th-TH", None, "th"),  # a choice that names none of the 38 is passed over
    (None, None, None, "en"),
])
def test_the_page_speaks_the_readers_choice_else_the_browsers_language(choice, browser, accept,
                                                                        page):
    assert page_language(choice, browser, accept) == page


def test_chainlits_files_are_named_for_each_language_they_ship_in_and_are_chainlits_own():
    """Every file Chainlit ships in one of our languages is named for it; the project's copies
    are Chainlit's, unedited: the catalogs carry their words (hymt_chat/locale)."""
    ours = {find_language(p.stem).code: p.stem for p in SHIPPED.glob("*.json")
            if find_language(p.stem) is not None}
    assert ours == CHAINLIT_TAGS
    assert chainlit_tag("th") is None
    for path in SHIPPED.glob("*.json"):
        assert json.loads((TRANSLATIONS / path.name).read_text("utf-8")) == json.loads(
            path.read_text("utf-8")), path.name


def test_every_language_says_every_word_and_each_replaces_a_string_chainlit_has():
    english = flat(json.loads((SHIPPED / "en-US.json").read_text("utf-8")))
    assert {k for k in ENGLISH if "." in k} <= set(english)  # a typo would land nowhere
    for lang in LANGUAGES:
        assert set(catalog(lang.code).group("chat")) == set(ENGLISH), lang.code
    # Latin letters only in the commands' own syntax (/to, /glossary add …), which is typed.
    # (nor in the {{slots}} filled in, nor in the sign-in example, a name typed in Latin letters)
    # (nor in the names of products, file formats and settings, written as people write them)
    names = (r"\{\{\w+\}\}|/\w+( (add|list|remove|clear|take|close|block|guests|formal|friendly|"
             r"neutral)\b)?|--?\w+|Hunyuan-MT(-\w+)?|Hy-MT2|HYMT_\w+|PDF|CSV|Excel|Word|Markdown|"
             r"PowerPoint|OpenDocument|JSON|YAML|PO|XLIFF|SRT|UTF-8|OCR|CPU|PNG|JPEG|WebP|JD-Express|"
             r"order number|<[^>]*>|[A-Z]{2,}|Enter|JavaScript|Office|Tesseract|\.(doc|xls|ppt)\b|"
             r"\| (formal|friendly)|(?<=[ ：:]|（)(ja|es)\b")  # keys, programs, command values
    japanese = " ".join(re.sub(names, "", v) for k, v in catalog("ja").group("chat").items()
                        if not k.startswith(("command_", "cli_"))
                        and k != "auth.login.form.email.placeholder")
    assert not re.findall(r"[A-Za-z]+", japanese), japanese
    # (a two-character word such as 数字 is Japanese too)
    chinese_only = {v for v in catalog("zh").group("chat").values()
                    if v not in catalog("ja").group("chat").values() and len(v) > 2}
    assert not any(value in japanese for value in chinese_only)
    assert {f"{p.key}{end}" for p in PROFILES for end in ("", "_about")} <= set(ENGLISH)
    assert nested(english) == json.loads((SHIPPED / "en-US.json").read_text("utf-8"))


def test_pickers_name_languages_in_the_readers_language_without_a_gloss():
    for reader in (lang.code for lang in LANGUAGES):
        assert len(PageText(reader).choices(include_auto=False)) == len(LANGUAGES), reader
    french = PageText("fr", catalog("fr").group("chat")).choices(include_auto=True)
    assert french["Détection automatique"] == "auto" and french["Allemand"] == "de"
    japanese = PageText("ja", catalog("ja").group("chat")).choices(include_auto=False)
    assert japanese["ドイツ語"] == "de" and japanese["英語"] == "en"
    assert PageText().choices(include_auto=False)["German"] == "de"
    assert not any("·" in label for label in japanese)  # no "德语" beside each name
    starters = PageText("ja", catalog("ja").group("chat")).starters()
    assert starters[1] == ("スペイン語 · ¿Dónde está la estación?", STARTERS[1][2])



def test_the_pages_strings_profiles_starters_and_readme_follow_its_language(tmp_path):
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return "EN:" + prompt[-40:]

    with app(tmp_path, answer=answer) as (url, _):
        # French: Chainlit's French, with the app's French over the strings it words its way.
        fr = httpx.get(f"{url}/project/translations", params={"language": "fr-FR"},
                       timeout=60).json()["translation"]
        shipped = flat(json.loads((SHIPPED / "fr-FR.json").read_text("utf-8")))
        said = flat(fr)
        assert said["chat.input.placeholder"] == catalog("fr").group("chat")["chat.input.placeholder"]
        assert said["threadHistory.sidebar.title"] == shipped["threadHistory.sidebar.title"]
        assert set(said) == set(flat(json.loads((SHIPPED / "en-US.json").read_text("utf-8"))))
        # Japanese settings: profiles, starters and the readme in Japanese.
        ja = httpx.get(f"{url}/project/settings", params={"language": "ja-JP"},
                       timeout=60).json()
        assert [p["display_name"] for p in ja["chatProfiles"]] == [
            catalog("ja").group("chat")[p.key] for p in PROFILES]
        assert ja["starters"][0]["label"].startswith("中国語 (簡体字) · ")
        assert ja["markdown"] == (ROOT / "chainlit_ja.md").read_text("utf-8")
        # English (and a language with no readme of its own) read the English one, never a
        # file that is not there.
        for tag in ("en-US", "ko-KR"):
            settings = httpx.get(f"{url}/project/settings", params={"language": tag},
                                 timeout=60).json()
            assert settings["markdown"] == (ROOT / "chainlit_en-US.md").read_text("utf-8")
        # The banner's words (public/banner.js) in the page's language.
        banner = httpx.get(f"{url}/hymt/words", params={"language": "ja-JP"}, timeout=60).json()
        assert banner["lang"] == "ja"
        assert banner["words"]["banner_demo"] == catalog("ja").group("chat")["banner_demo"]
        # The reader's choice (?lang=) beats the browser's language, on both requests.
        page = httpx.get(f"{url}/", params={"lang": "de"}, timeout=60)
        assert '<html lang="de">' in page.text  # the page says which, for screen readers
        chosen = {COOKIE: page.cookies[COOKIE]}
        assert '<html lang="ja">' in httpx.get(url, headers={"Accept-Language": "ja-JP"},
                                               timeout=60).text
        de = httpx.get(f"{url}/project/translations", params={"language": "fr-FR"},
                       cookies=chosen, timeout=60).json()["translation"]
        assert de["chat"]["input"]["placeholder"] == catalog("de").group("chat")["chat.input.placeholder"]
        de = httpx.get(f"{url}/project/settings", params={"language": "fr-FR"},
                       cookies=chosen, timeout=60).json()
        assert de["chatProfiles"][0]["display_name"] == catalog("de").group("chat")["translator"]
        # Thai: Chainlit ships no Thai; its strings and the app's come from the Thai catalog.
        th = flat(httpx.get(f"{url}/project/translations", params={"language": "th-TH"},
                            timeout=60).json()["translation"])
        thai = catalog("th")
        assert th["chat.input.placeholder"] == thai.group("chat")["chat.input.placeholder"]
        assert th["threadHistory.sidebar.title"] == thai.messages[
            "chainlit|threadHistory.sidebar.title"]
        assert th["navigation.user.menu.settingsKey"] == "S"  # a shortcut, not a word
        # Japanese: Chainlit ships it but leaves some strings English ("Light Theme"); the
        # catalog fills them, and keeps Chainlit's own words where it has them.
        ja = flat(httpx.get(f"{url}/project/translations", params={"language": "ja"},
                            timeout=60).json()["translation"])
        shipped = flat(json.loads((SHIPPED / "ja.json").read_text("utf-8")))
        assert ja["navigation.header.theme.light"] != "Light Theme"
        assert ja["common.actions.cancel"] == shipped["common.actions.cancel"]  # Chainlit's own
        assert ja["chat.input.placeholder"] == catalog("ja").group("chat")["chat.input.placeholder"]
        assert asked == []  # no page's word was asked of the model
        # A French tab: its pickers and commands in French.
        tab = Tab(url, headers={"Accept-Language": "fr-FR,fr;q=0.9"})
        asyncio.run(_pickers_and_commands(tab))
        logged = (tmp_path / "app.log").read_text("utf-8", errors="replace")
    assert "Translated markdown file" not in logged
    assert "Translation file for" not in logged


async def _pickers_and_commands(tab: Tab) -> None:
    async with tab:
        commands = await tab.event("set_commands")
        settings = await tab.event("chat_settings")
    labels = {w["id"]: w for w in settings}
    assert labels["source"]["label"] == catalog("fr").group("chat")["from"]
    assert "Détection automatique" in {i["label"] for i in labels["source"]["items"]}
    assert {c["id"]: c["description"] for c in commands}["swap"] == catalog("fr").group("chat")["command_swap"]


async def test_the_reader_picks_the_pages_language_in_the_settings(tmp_path):
    """The picker names each language in itself; a new pick makes the tab's script load the
    page again in it (public/banner.js, driven in tests/test_chat_language_browser.py), and
    leaves the other settings for the page it loads."""
    with StubModel() as stub:
        screen = RecordingScreen()
        session = TranslatorSession(services(stub, tmp_path), screen, session_id="s",
                                    user_key="addr:1", page=PageText("fr", catalog("fr").group("chat")))
        await session.start()
        picker = next(f for f in screen.panels[-1] if f.id == PAGE_LANGUAGE)
        assert picker.label == "Langue de la page" and picker.value == "fr"
        assert picker.items["日本語"] == "ja" and picker.items["Español"] == "es"
        await session.settings_changed({PAGE_LANGUAGE: "fr", "target": "de"})  # not the page's
        assert screen.signals == []
        await session.settings_changed({PAGE_LANGUAGE: "ja", "target": "es"})
        assert screen.signals == [{"hymt": PAGE_LANGUAGE, "code": "ja"}]
        assert session.state.target == "de"  # the rest waits for the page in Japanese


def test_a_translations_own_lines_speak_the_pages_language():
    """The progress line, the answer's meta line and the same-language notice in the page's
    words, languages named in its language; an English page reads as it always did."""
    from types import SimpleNamespace

    from hymt_chat.modes import wording

    fr, en = PageText("fr", catalog("fr").group("chat")), PageText()
    done = SimpleNamespace(source="de", target="en", seconds=1.5, segments=3, remembered=())
    assert wording.format_meta(done, page=fr, demo=True) == (
        "Allemand → Anglais · 1.5 s · 3 parties · modèle de démonstration")
    assert wording.format_meta(done, page=en) == "German → English · 1.5 s · 3 parts"
    assert wording.progress_label(1, 4, 30.0, fr) == (
        "parties traduites : 1 sur 4 · encore environ 30 s")
    assert wording.progress_label(1, 4, 30.0) == "1 of 4 parts · about 30 s left"
    assert wording.same_language_message("en", can_swap=False, page=fr).startswith(
        "Ce texte est déjà en anglais : ")
    ja = PageText("ja", catalog("ja").group("chat"))
    assert wording.progress_label(2, 5, None, ja) == "5 件中 2 件"
    assert ja.name_of(None) == "不明な言語" and ja.name_of("fr") == "フランス語"
