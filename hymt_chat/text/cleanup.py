"""Text hygiene: clean what users paste, decode uploads, tell blank text from text.

Everything here is pure and cheap enough to run on a 200,000-character paste.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from hymt_chat.errors import NotTextError

__all__ = ["TITLE_CHARS", "clean_text", "decode_bytes", "headline", "is_blank"]

# --------------------------------------------------------------------------------------------
# Cleanup
# --------------------------------------------------------------------------------------------

# Deleted wherever they occur. Every one is invisible, carries no meaning a translator needs,
# and either confuses the tokenizer (BOM, zero-width space, soft hyphen inside words) or the
# chat display:
#   U+00AD soft hyphen, U+200B zero-width space, U+2060 word joiner, U+2061-2064 invisible
#   math operators, U+206A-206F deprecated format controls, U+FEFF BOM / ZWNBSP, U+FFF9-FFFB
#   interlinear annotation, U+E0001 language tag, lone surrogates (cannot be sent as UTF-8),
#   U+FFFE/U+FFFF non-characters (U+FFFE is the sign of a byte-swapped decode),
#   C0/C1 controls except tab, LF and CR (CR is turned into LF below).
#   U+202A-202E (LRE RLE PDF LRO RLO) and U+2066-2069 (LRI RLI FSI PDI): bidi controls with a
#   *scope*. An unbalanced one (common in text copied out of chat apps) reorders everything
#   after it in our own UI, RLO is the classic spoofing trick, and the model gains nothing.
# Kept on purpose:
#   U+200E/U+200F LRM/RLM and U+061C ALM: scope-less marks, so they cannot leak direction into
#   the rest of the page; RTL keyboards insert them so that "C++" or a final "!" displays
#   correctly in Hebrew/Arabic text, and removing them visibly reorders the user's own words.
#   U+200C/U+200D ZWNJ/ZWJ: spelling in Persian (می‌خواهم) and Indic scripts, and the glue of
#   emoji sequences (👨‍👩‍👧); only stray ones (next to whitespace or the text's ends) go.
#   U+180E Mongolian vowel separator: selects letter forms in traditional Mongolian script,
#   so it stays between Mongolian letters and goes everywhere else (where it is junk).
#   Emoji tag characters U+E0020-E007F (subdivision flags such as 🏴󠁧󠁢󠁳󠁣󠁴󠁿), variation selectors,
#   Arabic number signs U+0600-0605 and other format characters that render something.
_JUNK = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f"
    "\u00ad\u200b\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff"
    "\U000e0001\ud800-\udfff]+"
)
# Line breaks that are not LF. VT, FF, NEL and U+2028/U+2029 mean "new line" to their writers;
# deleting them would glue two words together, so they become LF like CR does.
_LINE_BREAKS = re.compile("\r\n?|[\x0b\x0c\x85\u2028\u2029]")
# A joiner that joins nothing; a vowel separator outside Mongolian script.
_STRAY_JOINERS = re.compile(
    r"(?<!\S)[\u200c\u200d]+|[\u200c\u200d]+(?!\S)"
    r"|(?<![\u1800-\u18af])\u180e|\u180e(?![\u1800-\u18af])"
)
_JOINER_CHARS = ("\u200c", "\u200d", "\u180e")

# Invisible on their own: what is_blank ignores besides whitespace (kept marks included).
_INVISIBLE_ONLY = re.compile(
    "[\\s\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]*"
)


def clean_text(text: str) -> str:
    """Remove invisible junk and control characters, unify line ends to LF, and NFC-normalise.

    Pasted text arrives with BOMs, zero-width spaces and stray controls from editors and chat
    apps; the model treats them as content. Meaningful invisibles (ZWJ in emoji, ZWNJ in
    Persian, LRM/RLM) are kept: see the table above for each decision.
    """
    text = _JUNK.sub("", text)
    text = _LINE_BREAKS.sub("\n", text)
    if any(ch in text for ch in _JOINER_CHARS):
        text = _STRAY_JOINERS.sub("", text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def is_blank(text: str) -> bool:
    """True when nothing a translator could work on is left: whitespace and invisibles only."""
    return _INVISIBLE_ONLY.fullmatch(clean_text(text)) is not None


TITLE_CHARS = 50
"""The longest name of a thread in the history (the sidebar shows fewer)."""


def headline(text: str, limit: int = TITLE_CHARS) -> str:
    """*text* as one line of at most *limit* characters (a thread's name in the history):
    its whitespace runs made single spaces, cut at a word where there is one, then "…"."""
    line = " ".join(clean_text(text).split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word boundary not too far back (CJK has none: cut anywhere)
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


# --------------------------------------------------------------------------------------------
# Decoding uploads
# --------------------------------------------------------------------------------------------

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_bytes(data: bytes) -> str:
    """Decode an uploaded file: UTF-8 (BOM optional), or UTF-16/32 when a BOM says so.

    Anything else is refused rather than guessed: a wrong guess (latin-1, cp1252…) would be
    translated as mojibake and look like a model failure.
    """
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    binary = NotTextError("This file is not UTF-8 text: it contains NUL bytes, so it looks "
                          "binary.").saying("file_binary")
    if encoding == "utf-8" and b"\x00" in data:
        raise binary
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        raise NotTextError(
            f"This file is not UTF-8 text (invalid byte at position {err.start:,}); "
            "save it as UTF-8 and try again."
        ).saying("file_not_utf8", position=err.start) from None
    if "\x00" in text:
        raise binary
    return text
