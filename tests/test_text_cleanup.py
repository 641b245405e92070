"""clean_text, is_blank and decode_bytes: junk goes, meaning stays."""

from __future__ import annotations

import codecs
import unicodedata

import pytest

from hymt_chat.errors import HymtError, NotTextError
from hymt_chat.text.cleanup import clean_text, decode_bytes, is_blank

FAMILY = "👨\u200d👩\u200d👧"  # ZWJ sequence
PERSIAN_WANT = "می\u200cخواهم"  # "I want": ZWNJ between the prefix and the verb
HINDI_ZWJ = "क्\u200dष"  # ZWJ after virama selects a half form
ARABIC = "مرحبا بالعالم، كيف حالك اليوم؟"
HEBREW = "שלום עולם, מה שלומך היום?"
TIBETAN = "བོད་ཀྱི་སྐད་ཡིག་ནི་ཧ་ཅང་གལ་ཆེན་པོ་ཡིན།"


def test_bom_removed_at_start_and_in_middle() -> None:
    assert clean_text("\ufeffHello\ufeff world\ufeff") == "Hello world"


def test_zero_width_junk_removed() -> None:
    text = "in\u200bter\u2060na\u00adtion\u2061al\u2062 \u202eevil\u202c \u2067iso\u2069"
    assert clean_text(text) == "international evil iso"


def test_lrm_and_rlm_kept() -> None:
    text = "שלום C++\u200e!"
    assert clean_text(text) == text


def test_crlf_and_lone_cr_become_lf() -> None:
    assert clean_text("a\r\nb\rc\n\r\nd") == "a\nb\nc\n\nd"


def test_other_line_breaks_become_lf_instead_of_gluing_words() -> None:
    assert clean_text("one\x0ctwo\u2028three\x85four") == "one\ntwo\nthree\nfour"


def test_control_characters_removed_but_newline_and_tab_kept() -> None:
    text = "a\x00b\x07c\x1b[31md\x7fe\x9bf\tg\nh"
    assert clean_text(text) == "abc[31mdef\tg\nh"


def test_lone_surrogates_removed() -> None:
    cleaned = clean_text("ok\ud83d then")
    assert cleaned == "ok then"
    cleaned.encode("utf-8")  # would raise if a surrogate survived


def test_nfc_composes_combining_accent() -> None:
    cleaned = clean_text("cafe\u0301")
    assert cleaned == "café"
    assert len(cleaned) == 4
    assert unicodedata.is_normalized("NFC", cleaned)


def test_combining_accent_after_removed_junk_still_composes() -> None:
    assert clean_text("e\u200b\u0301") == "é"


@pytest.mark.parametrize(
    "text",
    [
        FAMILY,
        f"family {FAMILY} photo",
        "❤\ufe0f\u200d🔥 and 🏳\ufe0f\u200d🌈",
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # Scotland flag: tags
        PERSIAN_WANT,
        f"من {PERSIAN_WANT} بروم",
        HINDI_ZWJ,
        ARABIC,
        HEBREW,
        TIBETAN,
        "ᠮᠣᠩᠭᠣᠯ ᠬᠠᠨ\u180eᠠ",  # Mongolian vowel separator between Mongolian letters
    ],
)
def test_meaningful_text_kept_byte_identical(text: str) -> None:
    assert clean_text(text).encode("utf-8") == text.encode("utf-8")


def test_stray_joiners_removed() -> None:
    assert clean_text("\u200dstart end\u200c") == "start end"
    assert clean_text("a \u200d b") == "a  b"
    assert clean_text("x\u180ey") == "xy"  # vowel separator outside Mongolian script


@pytest.mark.parametrize(
    "text",
    ["", "   ", " \t\n\r\n ", "\u200b\u200b", " \u200b \ufeff\u2060 ", "\u200e", "\u200d \u200c"],
)
def test_only_whitespace_and_invisibles_is_blank(text: str) -> None:
    assert is_blank(text)


@pytest.mark.parametrize("text", ["a", " . ", "😀", "\u200bx\u200b", "،", "།"])
def test_anything_visible_is_not_blank(text: str) -> None:
    assert not is_blank(text)


def test_large_paste_is_cleaned_losslessly_when_clean() -> None:
    line = f"Lorem ipsum dolor sit amet. 中文文本。{ARABIC} {FAMILY} {PERSIAN_WANT}\tend\n"
    text = (line * (200_000 // len(line) + 1))[:200_000]
    assert clean_text(text) == text


def test_large_paste_with_junk_everywhere() -> None:
    clean = ("word " * 40_000)[:200_000]
    dirty = clean.replace(" ", " \u200b\ufeff").replace("word", "wo\r\nrd")
    assert clean_text(dirty) == clean.replace("word", "wo\nrd")


# --- decode_bytes ---------------------------------------------------------------------------

def test_decode_plain_utf8() -> None:
    assert decode_bytes("Grüße, 你好 👋".encode()) == "Grüße, 你好 👋"


def test_decode_utf8_with_bom_drops_it() -> None:
    assert decode_bytes(codecs.BOM_UTF8 + b"hello") == "hello"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_decode_utf16_with_bom(encoding: str) -> None:
    text = "Привет, мир"
    data = text.encode(encoding)
    if encoding != "utf-16":  # the plain codec writes its own BOM
        data = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + data
    assert decode_bytes(data) == text


def test_decode_empty() -> None:
    assert decode_bytes(b"") == ""


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00",
        b"hello\x00world",
        "café".encode("latin-1"),
        b"\xff\xd8\xff\xe0\x00\x10JFIF",
        "abc".encode("utf-16-le"),  # UTF-16 without a BOM is full of NULs
    ],
)
def test_binary_or_non_utf8_raises_not_text(data: bytes) -> None:
    with pytest.raises(NotTextError) as info:
        decode_bytes(data)
    assert isinstance(info.value, HymtError)
    assert "not UTF-8 text" in str(info.value)
