"""The message catalogs: the template is what pybabel extracts from the code today, every one
of the 38 has every message with its placeholders, commands and numbers, each compiles as
msgfmt would, and a missing message falls back to English for itself alone.

Babel's own reader and compiler judge the files (babel.messages.pofile / mofile), and its
command line (``pybabel extract -F babel.cfg``) the extraction; the plural rules are CLDR's as
Babel ships them."""

from __future__ import annotations

import subprocess
import sys
from io import BytesIO
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.lang.page_locale import page_language
from hymt_chat.modes.page_text import PageText
from hymt_chat.words.catalogs import LOCALES, catalog, codes, locale_of, po_path
from hymt_chat.words.checks import kept, problems
from hymt_chat.words.extract import template
from hymt_chat.words.said import Code, said
from hymt_chat.words.source import CHAT, GUEST

ROOT = Path(__file__).resolve().parent.parent


def _ids(po: Catalog) -> set[tuple[str | None, object]]:
    return {(m.context, m.id) for m in po if m.id}


def test_the_template_is_what_the_code_says_now():
    """``scripts/catalogs.py extract`` was run after the last change to a message."""
    with (LOCALES / "hymt.pot").open("rb") as handle:
        kept_pot = read_po(handle)
    assert _ids(kept_pot) == _ids(template())


def test_pybabel_extracts_every_message(tmp_path):
    """The command line translators' tools use finds the same messages as the template."""
    out = tmp_path / "hymt.pot"
    subprocess.run([str(Path(sys.executable).parent / "pybabel"), "extract", "-F", "babel.cfg",
                    "-k", "N_:1c,2", "-k", "NP_:1c,2,3", "-o", str(out), "hymt_chat",
                    ".chainlit/translations/en-US.json"], cwd=ROOT, check=True,
                   capture_output=True)
    with out.open("rb") as handle:
        extracted = read_po(handle)
    assert _ids(extracted) == _ids(template())


@pytest.mark.parametrize("code", codes())
def test_every_language_has_every_message_and_compiles(code):
    pot = template()
    with po_path(code).open("rb") as handle:
        po = read_po(handle, locale=locale_of(code))
    assert problems(pot, po) == []
    # CLDR's plural rule for the language, as Babel computes it, is the catalog's.
    assert po.plural_forms == Catalog(locale=locale_of(code)).plural_forms
    assert po.num_plurals == len(Locale.parse(locale_of(code)).plural_form.tags) or (
        po.num_plurals == Catalog(locale=locale_of(code)).num_plurals)
    compiled = BytesIO()
    write_mo(compiled, po, use_fuzzy=True)
    compiled.seek(0)
    assert len(read_mo(compiled)) >= len(pot) - 1


def test_the_38_less_english_have_a_catalog_each():
    assert sorted(codes()) == sorted(lang.code for lang in LANGUAGES if lang.code != "en")
    assert {p.parent.parent.name for p in LOCALES.glob("*/LC_MESSAGES/hymt.po")} == {
        locale_of(code) for code in codes()}


def test_a_missing_message_is_english_for_itself_alone():
    french = catalog("fr")
    holed = type(french)("fr", {k: v for k, v in french.messages.items()
                                if k != "guest|send"}, french.plurals, french.plural)
    words = holed.group("guest")
    assert words["send"] == GUEST["send"]  # English, for that word
    assert words["title"] == french.group("guest")["title"] != GUEST["title"]
    whole = set(problems(template(), _without(po_path("fr"), "")))
    assert set(problems(template(), _without(po_path("fr"), "guest|send"))) - whole == {
        "guest|send: missing"}


def _without(path: Path, context: str) -> Catalog:
    with path.open("rb") as handle:
        po = read_po(handle, locale="fr")
    for message in list(po):
        if message.context == context:
            po.delete(message.id, context=context)
    return po


def test_the_check_refuses_a_lost_placeholder_command_or_number():
    assert kept("This text is {{size}} characters", "Ce texte fait {{taille}} caractères")
    assert kept("Pick a target with /to <language>.", "Choisissez une cible avec /vers.")
    assert kept("only the last 20 are kept", "seuls les derniers sont gardés")
    assert not kept("only the last 20 are kept", "seuls les 20 derniers sont gardés")
    assert not kept("in two halves", "2 つに分けて")  # a language may add a number


@pytest.mark.parametrize(("accept", "code"), [
    ("sw-KE,sw;q=0.9", "en"),  # none of the 38: English, never a broken page
    ("sw-KE,sw;q=0.9,fr;q=0.5", "fr"),  # the nearest the reader reads
    ("pt-BR", "pt"), ("zh-TW", "zh-Hant"), ("es-419", "es"), ("ar-SA", "ar"),
])
def test_a_locale_the_app_lacks_gets_the_nearest_else_english(accept, code):
    assert page_language(accept_language=accept) == code


def test_pages_and_errors_speak_the_catalogs_words():
    french = PageText.of("fr")
    assert french["into"] == catalog("fr").group("chat")["into"] != CHAT["into"]
    sentence = said("swap_same", language=Code("de"))
    assert str(sentence) == "Source and target are both German."
    assert french.say(sentence) == french.fill("swap_same", language="allemand")
    assert PageText.of("sw").language == "en"  # a code outside the 38: English
    assert french.count("room_again", 1) != french.count("room_again", 5)
