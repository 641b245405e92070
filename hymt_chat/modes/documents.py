"""Translate uploaded documents — .txt, .md, .srt, .json, .yaml, .po, and through
:mod:`hymt_chat.text.formats` .docx, .pptx, .xlsx, .odt, .odp, .ods, .html, .xlf/.xliff, .epub —
keeping everything that is not prose untouched.

A document is cut into :class:`Piece` objects: literal ones (SRT numbers and timestamps,
Markdown code, markers, blank lines…) are copied, translatable ones go through a translate
callback, and the pieces are joined back in order; a piece that fails is marked and can be
retried alone. The callback is the only way out to the
model, so the structure is tested with a fake one.

* ``.txt`` — the whole text is one piece (the translator segments it itself); a long one is cut
  between paragraphs into chunks, so a file may be longer than a chat message.
* ``.srt`` — parsed with the ``srt`` library; only each cue's text is translated, numbering,
  timestamps, positions and blank lines are copied byte for byte.
* ``.md`` — fenced and indented code blocks, front matter, HTML blocks, link definitions,
  rules and table separators are copied; heading, list, quote and task markers are kept and
  only the text after them is translated; inline code, URLs and HTML tags inside text must come
  back unchanged, else the text around them is translated piece by piece.
* ``.json``, ``.yaml``/``.yml``, ``.po`` — only string values (:mod:`hymt_chat.modes.structured`):
  keys, placeholders and plural forms are kept; with a family that publishes a structured-data
  instruction, values go in blocks through it (:class:`StructuredCall`: each answer checked as
  a value sent alone is), and any value that does not come back intact is translated alone.
* office files, OpenDocument, HTML, XLIFF, EPUB — read by :func:`hymt_chat.text.formats.
  read_source` into units (a paragraph, a cell, a segment: one sentence with its inline
  formatting as ``<b id="N">``/``<x id="N"/>`` tags, which are protected spans); the units are the pieces,
  joined by :data:`UNIT_SEPARATOR`, and :meth:`Document.encode` writes them back into the file.

The whole API, for any of these kinds (the chat, LibreTranslate's /translate_file and DeepL's
/v2/document alike): ``doc = load_document(name, data, max_chars=…)``, ``out = await
translate_document(doc, translate)``, ``doc.encode(out)`` -> the translated file's bytes (and
for an IncompleteTranslationError, ``doc.encode(err.partial.text)`` -> the ``.partial`` file).
A callback that answers with the checks' findings (an :class:`Answer`, as the Translator's
``Translation``) has them collected in ``translate_document(…, flags=FileFlags())``, by part,
for the file's answer to show.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

import srt

from hymt_chat.engine.priority import BULK
from hymt_chat.engine.runner import run_bounded
from hymt_chat.engine.translator import (
    PartialTranslation,
    PartsCancelled,
    SegmentJob,
    Translator,
    mark_missing,
    part_numbers,
)
from hymt_chat.errors import (
    IncompleteTranslationError,
    InputError,
    InputTooLongError,
    ModelError,
    NotTextError,
)
from hymt_chat.lang.detect import detect_language
from hymt_chat.modes.structured import (
    FORMAT_TYPES,
    SPLITTERS,
    STRUCTURED_KINDS,
    StructuredError,
    placeholders,
    read_structured_answer,
    structured_payload,
)
from hymt_chat.text import formats
from hymt_chat.text.checks import Finding, check_translation
from hymt_chat.text.cleanup import decode_bytes, is_blank
from hymt_chat.text.formats.inline import plain_of, tags_of
from hymt_chat.text.formats.pdf_guard import viewable
from hymt_chat.text.values import values_prepared
from hymt_chat.words.said import Said, said

if TYPE_CHECKING:
    from hymt_chat.engine.policy import EventSink

__all__ = [
    "DOCUMENT_TYPES",
    "KIND_WORDS",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "UNIT_SEPARATOR",
    "Answer",
    "Document",
    "DocumentError",
    "FileFlags",
    "PartialDocument",
    "Piece",
    "StructuredCall",
    "accepted_kinds",
    "conversions",
    "detect_document_language",
    "file_summary",
    "found_text",
    "kept_summary",
    "load_document",
    "output_name",
    "read_upload",
    "split_document",
    "translate_document",
    "translate_document_rest",
    "untranslated",
    "upload_mime",
]

Kind = str  # "txt", "md", "srt", "json", "yaml", "po", or a kind of formats.FORMATS ("docx"…)
# extension -> (kind, MIME type of the file we send back)
DOCUMENT_TYPES: dict[str, tuple[Kind, str]] = {
    ".txt": ("txt", "text/plain"),
    ".md": ("md", "text/markdown"),
    ".markdown": ("md", "text/markdown"),
    ".srt": ("srt", "application/x-subrip"),
    ".json": ("json", "application/json"),
    ".yaml": ("yaml", "application/yaml"),
    ".yml": ("yaml", "application/yaml"),
    ".po": ("po", "text/x-gettext-translation"),
    **{suffix: (kind, mime) for suffix, (kind, mime, _) in formats.FORMATS.items()},
}
UNIT_SEPARATOR = "\x1e"
"""Joins a formatted document's units in the text that translate_document returns (ASCII's
record separator: cleanup removes control characters from the text sent, and each answer is
stripped of it), so that the one text-shaped machinery carries them and encode splits them."""
MAX_FILE_BYTES = 2 * 1024 * 1024
"""Largest file the app reads. Chainlit's page lets larger ones through (.chainlit/config.toml
sets its limits far above the app's, whose refusal is an English toast): the app says it,
in the page's language (``file_too_big``)."""
MAX_FILES = 5
"""Files the app reads in one message (more: ``too_many_files``; the page lets up to
.chainlit/config.toml's ``max_files`` through, for the same reason)."""

ProgressSink = Callable[[int, int], "Awaitable[None] | None"]
_log = logging.getLogger(__name__)


class Answer(Protocol):
    """A piece's translation with what the checks found in it (the Translator's
    :class:`~hymt_chat.engine.translator.Translation`), for a caller that shows them."""

    @property
    def text(self) -> str: ...
    @property
    def warnings(self) -> tuple[Finding, ...]: ...


class Translate(Protocol):
    """Translate one piece of text; *on_progress* is passed only when a document is one piece.
    The answer is the text, or an :class:`Answer` whose findings go into the file's flags."""

    def __call__(self, text: str, *,
                 on_progress: ProgressSink | None = None) -> Awaitable[str | Answer]: ...


@dataclass(slots=True)
class FileFlags:
    """What the checks flagged in a file's translation, by part: the Nth translated piece in
    reading order, as the file's summary counts parts and a partial file names the missing
    ones. Filled while the parts come back; the rest of a partial file starts from its own."""

    parts: dict[int, tuple[Finding, ...]] = field(default_factory=dict)

    def add(self, part: int, found: Sequence[Finding]) -> None:
        if found:
            self.parts[part] = tuple(found)

    def by_part(self) -> tuple[tuple[int, tuple[Finding, ...]], ...]:
        """The flagged parts in reading order, each with its findings."""
        return tuple(sorted(self.parts.items()))


class DocumentError(InputError):
    """An upload that is not a supported, well-formed text document."""


@dataclass(frozen=True, slots=True)
class Document:
    name: str
    kind: Kind
    mime: str
    text: str  # LF line ends; a formatted document's words, one unit a line
    newline: str = "\n"  # the file's own line end, restored on output
    # A formatted document (.docx…): its bytes and its units' tagged texts. The parsed file is
    # not kept (lxml's tree is ~16x its XML, and a tab keeps 20 jobs for its buttons): encode
    # reads the bytes again, which gives the same units in the same order.
    data: bytes = field(default=b"", compare=False, repr=False)
    units: tuple[str, ...] = field(default=(), compare=False, repr=False)
    kept: tuple[Said, ...] = ()  # what such a file keeps as it was ("formulas, numbers…")
    removed: tuple[Said, ...] = ()  # active content taken out of it ("JavaScript"…)
    found: object = field(default=None, compare=False, repr=False)  # Source.found: no 2nd OCR

    @property
    def formatted(self) -> bool:
        return bool(self.units)

    def encode(self, text: str, target: str | None = None, kind: Kind | None = None) -> bytes:
        """Bytes of a translated version of this document, with the original line ends; for a
        formatted document (*text* its units joined by UNIT_SEPARATOR) the file of its kind,
        naming *target* as its language where the format has a place for it (XLIFF), or of
        *kind* where the format converts to it (:func:`conversions`: a PDF as .docx)."""
        if self.formatted:
            source = formats.read_source(self.name, self.data, self.found)
            if kind is not None and kind != self.kind:
                return source.write_as(kind, text.split(UNIT_SEPARATOR))
            return source.write(text.split(UNIT_SEPARATOR), target)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        return text.encode("utf-8")


@dataclass(slots=True)
class Piece:
    text: str
    translate: bool = False
    lines: int = 1  # SRT: the cue's line count, to re-wrap a long translation the same way
    protected: list[str] = field(default_factory=list)  # spans that must come back unchanged
    quote: Callable[[str], str] | None = None  # structured files: the answer written as a value

    def written(self, text: str) -> str:
        """*text* (this piece's translation, or its marked original) as the file writes it."""
        return self.quote(text) if self.quote is not None else text


# --------------------------------------------------------------------------------------------
# Loading and checking uploads
# --------------------------------------------------------------------------------------------


_ALIASES = frozenset({".markdown", ".yml", ".htm", ".xliff", ".jpeg"})  # not named in the refusal
KIND_WORDS: dict[Kind, str] = {
    "txt": "kind_text", "docx": "kind_word", "pptx": "kind_powerpoint", "xlsx": "kind_excel",
    "pdf": "kind_pdf", "png": "kind_pictures", "jpeg": "kind_pictures", "webp": "kind_pictures",
    "srt": "kind_subtitles", "html": "kind_web", "epub": "kind_ebooks",
    "odt": "kind_opendocument", "odp": "kind_opendocument", "ods": "kind_opendocument",
    "md": "kind_markdown", "json": "kind_strings", "yaml": "kind_strings", "po": "kind_strings",
    "xliff": "kind_strings",
}
"""How people name each kind the app reads (a message of hymt_chat/words/source.py), in the
order a refusal lists them: "text, Word, PowerPoint, Excel, PDF, pictures…"."""
_DATA_FORMATS = {"json": "JSON", "yaml": "YAML", "po": "gettext PO"}


def accepted_kinds() -> tuple[Said, ...]:
    """The kinds of file the app reads, named as people name them (each kind once, from
    :data:`DOCUMENT_TYPES`): the list a refused upload is answered with."""
    kinds = {kind for kind, _ in DOCUMENT_TYPES.values()}
    return tuple(said(key) for key in dict.fromkeys(
        key for kind, key in KIND_WORDS.items() if kind in kinds))


def _kind_of(name: str) -> tuple[Kind, str]:
    suffix = PurePath(name).suffix.lower()
    if suffix in formats.REFUSED:
        formats.read_source(name, b"")  # raises: macros are refused by name, saying why
    if suffix not in DOCUMENT_TYPES:
        allowed = ", ".join(sorted({s for s in DOCUMENT_TYPES if s not in _ALIASES}))
        shown = suffix or "no extension"
        raise DocumentError(
            f"I can translate {allowed} files; "
            f"{PurePath(name).name!r} ({shown}) is not one of them."
        ).saying("file_kind", name=PurePath(name).name, kinds=accepted_kinds())
    return DOCUMENT_TYPES[suffix]


def _too_big(name: str, size: int, limit: int) -> DocumentError:
    return DocumentError(
        f"{PurePath(name).name!r} is {size / 1_048_576:.1f} MB; the limit is "
        f"{limit / 1_048_576:.0f} MB per file. Split it and upload the parts."
    ).saying("file_too_big", name=PurePath(name).name, size=round(size / 1_048_576, 1),
             limit=round(limit / 1_048_576))


def upload_mime(name: str, mime: str, data: bytes) -> str:
    """The MIME type an upload is kept under, which decides how the page shows it in the
    message that carries it: a PDF the app cannot open is a plain file there, not the page's
    PDF viewer (which would say "Failed to load PDF file." in English, or ask for a password),
    nor is one over the app's size, which the app refuses (and does not parse to judge);
    anything else keeps the type the browser gave it."""
    del name  # the type the browser gave decides the viewer (Chainlit's own rule)
    if mime == "application/pdf" and (len(data) > MAX_FILE_BYTES or not viewable(data)):
        return "application/octet-stream"
    return mime


def load_document(
    name: str, data: bytes, *, max_bytes: int = MAX_FILE_BYTES, max_chars: int | None = None
) -> Document:
    """Check and decode an upload. Raises DocumentError, NotTextError, FormatError or
    InputTooLongError."""
    kind, mime = _kind_of(name)
    if len(data) > max_bytes:
        raise _too_big(name, len(data), max_bytes)
    if PurePath(name).suffix.lower() in formats.FORMATS:
        return _load_formatted(name, data, kind, mime, max_chars)
    try:
        text = decode_bytes(data)  # NotTextError for binary / non-UTF-8
    except NotTextError as err:
        if err.said is not None:  # its page sentence names the file
            err.saying(err.said.key, **{**err.said.slots, "name": PurePath(name).name})
        raise
    text = text.removeprefix("\ufeff")
    newline = "\r\n" if "\r\n" in text else "\n"
    text = text.replace("\r\n", "\n")
    if is_blank(text):
        raise DocumentError(f"{PurePath(name).name!r} is empty: there is nothing to "
                            "translate.").saying("file_empty", name=PurePath(name).name)
    if max_chars is not None and len(text) > max_chars:
        raise InputTooLongError(len(text), max_chars)
    doc = Document(PurePath(name).name, kind, mime, text, newline)
    split_document(doc)  # refuse a malformed SRT now, before anything is translated
    return doc


def _load_formatted(name: str, data: bytes, kind: Kind, mime: str,
                    max_chars: int | None) -> Document:
    source = formats.read_source(name, data)
    units = tuple(_without_separator(unit.tagged) for unit in source.units)
    text = "\n".join(plain_of(unit) for unit in units)
    if is_blank(text):
        raise DocumentError(f"{PurePath(name).name!r} has no text to translate.").saying(
            "file_no_text", name=PurePath(name).name)
    if max_chars is not None and len(text) > max_chars:
        raise InputTooLongError(len(text), max_chars)
    return Document(PurePath(name).name, kind, mime, text, data=data, units=units,
                    kept=tuple(source.kept), removed=tuple(source.removed), found=source.found)


def untranslated(doc: Document) -> str:
    """The text :meth:`Document.encode` turns back into the document as it came (what to send
    when the document is already in the target language)."""
    if doc.formatted:
        return UNIT_SEPARATOR.join(doc.units)
    return doc.text


def file_summary(doc: Document) -> Said:
    """One line on what a translated document held: parts, characters, what was kept and
    what was removed, as a sentence the page words ("12 parts, 1,840 characters; kept as they
    were: formulas, numbers and dates")."""
    parts = sum(1 for p in split_document(doc) if p.translate)
    line = said("file_summary", count=parts, chars=len(doc.text))
    kept = kept_summary(doc)
    line = said("file_summary_kept", summary=line, kept=tuple(kept)) if kept else line
    return (said("file_summary_removed", summary=line, removed=doc.removed) if doc.removed
            else line)


def found_text(doc: Document, out: str) -> list[tuple[str, str]]:
    """A picture's (or any formatted document's) translated units and their translations in
    *out*, as plain text pairs in reading order: what the answer to a picture lists."""
    if not doc.formatted:
        return []
    return [(plain_of(unit), plain_of(text))
            for unit, text in zip(doc.units, out.split(UNIT_SEPARATOR), strict=False)
            if _has_words(plain_of(unit))]  # the translated parts: numbered as the flags are


def conversions(doc: Document) -> dict[Kind, str]:
    """The kinds *doc* can also be written as (kind -> MIME type), besides its own."""
    if not doc.formatted:
        return {}
    return dict(formats.CONVERSIONS.get(doc.kind, {}))


def kept_summary(doc: Document) -> list[Said]:
    """What a formatted document keeps untranslated, as short phrases ("formulas, numbers and
    dates"), for the one-line summary the chat shows."""
    return list(doc.kept)


def read_upload(path: str | Path, name: str, **limits: int) -> Document:
    """Read an uploaded file from disk, refusing a too-large one before reading it."""
    _kind_of(name)
    max_bytes = limits.get("max_bytes", MAX_FILE_BYTES)
    size = Path(path).stat().st_size
    if size > max_bytes:
        raise _too_big(name, size, max_bytes)
    return load_document(name, Path(path).read_bytes(), **limits)


def output_name(name: str, target: str, kind: Kind | None = None) -> str:
    """ "talk.srt" -> "talk.zh-Hant.srt"; with *kind*, that extension ("deal.pdf" -> "deal.de.docx")."""
    path = PurePath(PurePath(name).name)
    suffix = f".{kind}" if kind is not None else path.suffix
    return f"{path.stem}.{target}{suffix}"


# --------------------------------------------------------------------------------------------
# Splitting
# --------------------------------------------------------------------------------------------


TEXT_CHUNK_CHARS = 20_000
"""A .txt up to this size is one piece; a longer one is cut between paragraphs into pieces of
about this size (each stays far under the translator's input limit, and progress shows)."""


def _without_separator(text: str) -> str:
    return text.replace(UNIT_SEPARATOR, "")


def split_units(units: tuple[str, ...]) -> list[Piece]:
    """A formatted document's units as pieces: one translatable piece each (its tags
    protected), with a literal separator between them."""
    pieces: list[Piece] = []
    for i, text in enumerate(units):
        if i:
            pieces.append(Piece(UNIT_SEPARATOR))
        pieces.append(Piece(text, translate=_has_words(plain_of(text)),
                            protected=tags_of(text), quote=_without_separator))
    return pieces


def split_document(doc: Document) -> list[Piece]:
    if doc.formatted:
        return split_units(doc.units)
    if doc.kind in STRUCTURED_KINDS:
        try:
            parts = SPLITTERS[doc.kind](doc.text, repr(doc.name))
        except StructuredError as err:
            raise DocumentError(str(err)).saying(
                "file_data_invalid", name=doc.name, format=_DATA_FORMATS[doc.kind]) from None
        return [Piece(p.text, p.translate, protected=placeholders(p.text) if p.translate else [],
                      quote=p.quote) for p in parts]
    if doc.kind == "srt":
        return split_srt(doc.text)
    if doc.kind == "md":
        return split_markdown(doc.text)
    return split_plain(doc.text)


def split_plain(text: str, chunk: int = TEXT_CHUNK_CHARS) -> list[Piece]:
    """Plain text: whole when it is short, else paragraphs packed into chunks (blank lines kept)."""
    if len(text) <= chunk:
        return _text_pieces(text)
    pieces: list[Piece] = []
    buf = ""
    for part in re.split(r"(\n[ \t]*\n\s*)", text):
        if buf and len(buf) + len(part) > chunk and part.strip():
            pieces.extend(_text_pieces(buf))
            buf = ""
        buf += part
    if buf:
        pieces.extend(_text_pieces(buf))
    return pieces


def _text_pieces(text: str) -> list[Piece]:
    """Leading and trailing whitespace literal, the rest one translatable piece."""
    core = text.strip()
    if not core:
        return [Piece(text)]
    start = text.index(core)
    pieces = [Piece(text[:start]), Piece(core, translate=True), Piece(text[start + len(core):])]
    return [p for p in pieces if p.text]


# --- SRT --------------------------------------------------------------------------------------

# Formatting inside cues: HTML-like tags (<i>, <font color=…>) and ASS overrides ({\an8}).
_SRT_TAGS = re.compile(r"</?[A-Za-z][^<>]*>|\{\\[^{}]*\}")


def split_srt(text: str) -> list[Piece]:
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as err:
        line = text.count("\n", 0, err.expected_start) + 1
        raise DocumentError(
            f"This is not a valid SRT file (unexpected text at line {line}); "
            "numbering and timestamps must follow the SRT format."
        ).saying("srt_invalid", line=line) from None
    if not subtitles:
        raise DocumentError("This SRT file has no subtitles.").saying("srt_empty")
    pieces: list[Piece] = []
    pos = 0
    for match in srt.SRT_REGEX.finditer(text):
        start, end = match.span(5)  # the cue text; everything else is copied verbatim
        pieces.append(Piece(text[pos:start]))
        content = text[start:end]
        if content.strip():
            lines = [line.strip() for line in content.split("\n") if line.strip()]
            lead = content[: len(content) - len(content.lstrip())]
            trail = content[len(content.rstrip()):]
            pieces.append(Piece(lead))
            joined = " ".join(lines)
            pieces.append(Piece(joined, translate=_has_words(_SRT_TAGS.sub("", joined)),
                                lines=len(lines), protected=_SRT_TAGS.findall(content)))
            pieces.append(Piece(trail))
        else:
            pieces.append(Piece(content))
        pos = end
    pieces.append(Piece(text[pos:]))
    return [p for p in pieces if p.text]


_BREAK_NEAR = re.compile(r"[ ，、。；：！？,;:]")


def _rewrap(text: str, lines: int) -> str:
    """Put a cue that had several lines back on two, breaking near the middle (if it is long)."""
    if lines < 2 or "\n" in text:
        return text
    wide = sum(1 for ch in text if ord(ch) >= 0x1100)
    if len(text) + wide <= 42:
        return text
    middle = len(text) // 2
    breaks = [m.end() for m in _BREAK_NEAR.finditer(text) if 0 < m.end() < len(text)]
    if not breaks:
        return text
    cut = min(breaks, key=lambda i: abs(i - middle))
    first, second = text[:cut].rstrip(), text[cut:].lstrip()
    return f"{first}\n{second}" if first and second else text


# --- Markdown ---------------------------------------------------------------------------------

# Any indentation: a fence nested in a list item is still code (never sent to the model).
_FENCE_OPEN = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_BLANK = re.compile(r"^[ \t]*$")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S")
_HTML_LINE = re.compile(
    r"^ {0,3}</?(?:[A-Za-z][\w-]*)(?:\s[^<>]*)?/?>[ \t]*$|^ {0,3}<!--.*-->[ \t]*$"
)
_INDENTED = re.compile(r"^(?: {4}|\t)")
_PREFIX = re.compile(
    r"^(?P<prefix>[ \t]*(?:>[ \t]?)*[ \t]*"
    r"(?:(?P<heading>#{1,6})(?:[ \t]+|$)"
    r"|(?P<item>[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?)"
)
_HEADING_CLOSE = re.compile(r"[ \t]+#+[ \t]*$")
_HARD_BREAK = re.compile(r"(?: {2,}|\\)$")
# Inline spans that must survive translation unchanged.
_INLINE_PROTECTED = re.compile(
    r"(?P<code>(?P<ticks>`+)(?:(?!(?P=ticks)).)+?(?P=ticks))"
    r"|<(?:https?|mailto|ftp):[^<>\s]+>"
    r"|</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>"
    r"|\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:[ \t]+\"[^\"]*\")?\)"
    r"|\]\[[^\]]*\]"
    r"|https?://[^\s<>()\[\]`]+"
)


def _split_table_row(line: str) -> list[Piece]:
    """A table row: pipes and cell padding literal, each cell's text translatable."""
    pieces: list[Piece] = []
    for part in re.split(r"((?<!\\)\|)", line):
        if part == "|" or not part.strip():
            pieces.append(Piece(part))
        else:
            pieces.extend(_inline_pieces(part))
    return pieces


def _inline_pieces(text: str) -> list[Piece]:
    """Whitespace around *text* literal, the text translatable (with its protected spans)."""
    out = _text_pieces(text)
    for piece in out:
        if piece.translate:
            piece.protected = [m.group(0) for m in _INLINE_PROTECTED.finditer(piece.text)]
            if not _has_words(_INLINE_PROTECTED.sub("", piece.text)):
                piece.translate = False  # only code, URLs or tags: nothing to translate
    return out


def _has_words(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def split_markdown(text: str) -> list[Piece]:
    lines = text.splitlines(keepends=True)
    pieces: list[Piece] = []
    i = 0
    n = len(lines)
    prev_blank = True
    in_list = False

    def literal(line: str) -> None:
        pieces.append(Piece(line))

    # YAML front matter at the very start: copied whole.
    if lines and lines[0].rstrip("\n") == "---":
        for j in range(1, n):
            if lines[j].rstrip("\n") in ("---", "..."):
                pieces.extend(Piece(line) for line in lines[: j + 1])
                i = j + 1
                break

    while i < n:
        line = lines[i]
        body = line.rstrip("\n")
        end = line[len(body):]
        fence = _FENCE_OPEN.match(body)
        if fence and not (fence.group("fence")[0] == "`" and "`" in fence.group("info")):
            # Fenced code: copied up to and including the closing fence (or the end).
            mark = fence.group("fence")
            closing = re.compile(
                rf"^[ \t]*(?:>[ \t]?)*[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$"
            )
            literal(line)
            i += 1
            while i < n:
                literal(lines[i])
                i += 1
                if closing.match(lines[i - 1].rstrip("\n")):
                    break
            prev_blank = False
            continue
        if _BLANK.match(body):
            literal(line)
            prev_blank = True
            i += 1
            continue
        if body.lstrip().startswith("<!--"):
            # HTML comment, possibly over several lines.
            while i < n:
                literal(lines[i])
                i += 1
                if "-->" in lines[i - 1]:
                    break
            prev_blank = False
            continue
        if prev_blank and not in_list and _INDENTED.match(body):
            # Indented code block: runs until a non-indented, non-blank line.
            while i < n and (_INDENTED.match(lines[i]) or _BLANK.match(lines[i].rstrip("\n"))):
                if _BLANK.match(lines[i].rstrip("\n")) and not (
                    i + 1 < n and _INDENTED.match(lines[i + 1])
                ):
                    break
                literal(lines[i])
                i += 1
            prev_blank = False
            continue
        if _RULE.match(body) or _TABLE_SEP.match(body) and "-" in body and (
            "|" in body or (i > 0 and "|" in lines[i - 1])
        ) or _LINK_DEF.match(body) or _HTML_LINE.match(body):
            literal(line)
            prev_blank = False
            i += 1
            continue
        if "|" in body and (
            (i + 1 < n and _TABLE_SEP.match(lines[i + 1].rstrip("\n")) and "-" in lines[i + 1])
            or (i > 0 and "|" in lines[i - 1] and not prev_blank)
        ):
            pieces.extend(_split_table_row(body))
            literal(end)
            prev_blank = False
            i += 1
            continue

        # A text block: its first line's markers, then continuation lines joined with spaces.
        match = _PREFIX.match(body)
        assert match is not None  # every part of _PREFIX is optional: it matches any line
        prefix = match.group("prefix")
        if match.group("item"):
            in_list = True
        elif prev_blank and not body[:1].isspace():
            in_list = False
        content = body[len(prefix):]
        heading = bool(match.group("heading"))
        suffix = ""
        if heading:
            close = _HEADING_CLOSE.search(content)
            if close:
                content, suffix = content[: close.start()], content[close.start():]
        parts = [content]
        i += 1
        while (
            not heading
            and i < n
            and not _HARD_BREAK.search(parts[-1])
            and _is_continuation(lines[i], lines[i + 1] if i + 1 < n else "")
        ):
            nxt = lines[i].rstrip("\n")
            cont = _PREFIX.match(nxt)
            parts.append(nxt[len(cont.group("prefix")) if cont else 0:].lstrip())
            end = lines[i][len(nxt):]
            i += 1
        hard = _HARD_BREAK.search(parts[-1])
        if hard:  # a hard line break ("  " or "\\" at the end) stays after the text
            parts[-1], suffix = parts[-1][: hard.start()], hard.group(0) + suffix
        joined = " ".join(p.strip() for p in parts if p.strip())
        pieces.append(Piece(prefix))
        pieces.extend(_inline_pieces(joined) if joined else [])
        pieces.append(Piece(suffix + end))
        prev_blank = False
    return [p for p in pieces if p.text]


def _is_continuation(line: str, following: str) -> bool:
    """Does *line* continue the paragraph above (lazy continuation), rather than start a block?"""
    body = line.rstrip("\n")
    if _BLANK.match(body) or _FENCE_OPEN.match(body) or _RULE.match(body):
        return False
    if body.lstrip().startswith(("<!--", "|")) or _HTML_LINE.match(body) or _LINK_DEF.match(body):
        return False
    if _TABLE_SEP.match(body) and "-" in body:
        return False
    match = _PREFIX.match(body)
    assert match is not None  # every part of _PREFIX is optional: it matches any line
    if match.group("heading") or match.group("item"):
        return False
    return not ("|" in body and _TABLE_SEP.match(following.rstrip("\n")) and "-" in following)


# --------------------------------------------------------------------------------------------
# Translating
# --------------------------------------------------------------------------------------------


def translatable_text(pieces: list[Piece]) -> str:
    return "\n".join(p.text for p in pieces if p.translate)


def detect_document_language(doc: Document) -> str | None:
    """The language of the document's prose (markup, code and timestamps left out)."""
    if doc.formatted:
        return detect_language(doc.text)
    return detect_language(translatable_text(split_document(doc)))


def _read(answer: str | Answer) -> tuple[str, tuple[Finding, ...]]:
    """A translate callback's answer as its text and the checks' findings."""
    if isinstance(answer, str):
        return answer, ()
    return answer.text, tuple(answer.warnings)


async def _translate_piece(
    piece: Piece,
    translate: Translate,
    progress: ProgressSink | None,
    resume: Resume | None = None,
    earlier: PartialTranslation | None = None,
) -> tuple[str, tuple[Finding, ...]]:
    """The piece as the file writes it, and what the checks found in its translation."""
    if earlier is not None and resume is not None:
        out, found = _read(await resume(earlier, on_progress=progress))
    elif progress is not None:
        out, found = _read(await translate(piece.text, on_progress=progress))
    else:
        out, found = _read(await translate(piece.text))
    if piece.protected and Counter(_spans(out, piece)) != Counter(piece.protected):
        # The first answer is dropped: its findings are not what the file shows.
        out, found = await _translate_around(piece, translate)
    if piece.lines > 1:
        out = _rewrap(out, piece.lines)
    return piece.written(out), found


def _spans(text: str, piece: Piece) -> list[str]:
    """The protected spans of *piece* that occur in *text* (each occurrence counted)."""
    found: list[str] = []
    for span in set(piece.protected):
        found.extend([span] * text.count(span))
    return found


async def _translate_around(piece: Piece,
                            translate: Translate) -> tuple[str, tuple[Finding, ...]]:
    """The model changed a protected span: translate only the text between the spans."""
    spans = sorted(set(piece.protected), key=len, reverse=True)
    pattern = "|".join([*(re.escape(s) for s in spans), r"\[", r"\]"])
    out: list[str] = []
    found: list[Finding] = []
    for part in re.split(f"({pattern})", piece.text):
        if part in spans or not _has_words(part):
            out.append(part)
            continue
        # Markdown syntax at the edges ("[" of a link text, "**") stays put, like the spans.
        lead = _EDGE_LEAD.match(part).group(0)  # type: ignore[union-attr]
        trail = _EDGE_TRAIL.search(part[len(lead):]).group(0)  # type: ignore[union-attr]
        core = part[len(lead): len(part) - len(trail)]
        text, flagged = _read(await translate(core))
        out.append(lead + text + trail)
        found.extend(flagged)
    return "".join(out), tuple(found)


_EDGE_LEAD = re.compile(r"^[\s\[*_~]*")
_EDGE_TRAIL = re.compile(r"[\s\]*_~]*$")


@dataclass(frozen=True, slots=True)
class PartialDocument:
    """A document some pieces of which failed: what :func:`translate_document_rest` resumes.

    ``results`` holds each piece's output (literal pieces are their own), None where missing;
    ``inner`` the translated part of a missing piece that failed half way; ``flags`` what the
    checks found in the translated parts, by part number (:class:`FileFlags`), kept for the rest.
    """

    pieces: tuple[Piece, ...]
    results: tuple[str | None, ...]
    inner: dict[int, PartialTranslation] = field(default_factory=dict)
    flags: tuple[tuple[int, tuple[Finding, ...]], ...] = ()

    @property
    def part_numbers(self) -> list[int]:
        return part_numbers([p.translate for p in self.pieces], self.results)

    @property
    def so_far(self) -> str:
        """The document as far as it got: everything up to its last piece translated (or half
        translated), the untranslated rest left out."""
        last = max((i for i, (piece, result) in enumerate(zip(self.pieces, self.results,
                                                               strict=True))
                    if piece.translate and (result is not None or i in self.inner)), default=-1)
        return self._joined(last + 1)

    @property
    def text(self) -> str:
        """Everything in order; a missing piece as far as it got, the rest of it marked."""
        return self._joined(len(self.pieces))

    def _joined(self, count: int) -> str:
        out = []
        for i, (piece, result) in enumerate(zip(self.pieces[:count], self.results[:count],
                                                strict=True)):
            if result is None:
                result = piece.written(self.inner[i].text if i in self.inner
                                       else mark_missing(piece.text))
            out.append(result)
        return "".join(out)


class Resume(Protocol):
    """Translate the rest of a piece that failed half way (Translator.translate_rest)."""

    def __call__(self, partial: PartialTranslation, *,
                 on_progress: ProgressSink | None = None) -> Awaitable[str | Answer]: ...


class _Unfinished(ModelError):
    """A piece whose own segments partly failed: its translated part is kept in ``partial``."""

    def __init__(self, err: IncompleteTranslationError) -> None:
        super().__init__(str(err))
        self.partial: PartialTranslation = err.partial  # type: ignore[assignment]
        self.cause = err.cause


async def translate_document(
    doc: Document,
    translate: Translate,
    *,
    resume: Resume | None = None,
    on_progress: ProgressSink | None = None,
    concurrency: int | Callable[[], int] = 4,
    structured: StructuredCall | None = None,
    flags: FileFlags | None = None,
) -> str:
    """Translate *doc* through *translate* and return the new text (LF line ends); *flags*
    collects what the checks found in each part (when *translate* answers with them).

    A .json, .yaml or .po file goes first through *structured* (the family's structured-data
    instruction, :meth:`StructuredCall.for_translator`) when given; the values it did not
    bring back intact go through *translate* one by one.

    Pieces run at most *concurrency* at a time (a number, or a callable re-read as the
    policy's share for documents changes); progress counts translated pieces, or, for a
    one-piece document, whatever the translate callback reports. A piece that fails does
    not stop the others: IncompleteTranslationError then carries a :class:`PartialDocument`
    with everything translated, which :func:`translate_document_rest` (with *resume*) finishes.
    """
    pieces = split_document(doc)
    results: list[str | None] = [None if p.translate else p.text for p in pieces]
    flags = flags if flags is not None else FileFlags()
    if structured is not None and doc.kind in STRUCTURED_KINDS:
        found = await structured.fill(pieces, results, FORMAT_TYPES[doc.kind])
        part = _part_of(pieces)
        for index, findings in found.items():
            flags.add(part[index], findings)
    return await _run_pieces(pieces, results, {}, translate, resume, on_progress, concurrency,
                             flags)


STRUCTURED_BLOCK_CHARS = 1200
"""Characters of values per structured-data request: the JSON block and its answer (about as
long) must fit the context with the instruction (4096 tokens on the CPU profile)."""

StructuredSend = Callable[[str, str], Awaitable[str]]
"""(block, format_type) -> the model's answer, through the structured-data instruction."""
StructuredCheck = Callable[[str, str], Awaitable[tuple[Finding, ...]]]
"""(value, its answer in a block) -> what the checks every translation passes find in it."""


class StructuredCall:
    """Sends a structured file's values in blocks with the family's structured-data
    instruction, and keeps count (``blocks``, ``values``, ``accepted``) for the UI and tests.
    With *check*, each accepted answer is checked as a value sent alone would be, and what is
    found is flagged like it (not asked again: short UI strings often trip the language check,
    and a file of them would lose the one call a block)."""

    def __init__(self, send: StructuredSend, block_chars: int = STRUCTURED_BLOCK_CHARS,
                 check: StructuredCheck | None = None) -> None:
        self.send = send
        self.block_chars = block_chars
        self.check = check
        self.blocks = self.values = self.accepted = 0

    @classmethod
    def for_translator(cls, translator: Translator, source: str | None, target: str, *,
                       user: str = "default", on_event: EventSink | None = None,
                       ) -> StructuredCall | None:
        """The structured call of *translator*'s family, or None when it publishes no such
        instruction (then values go one by one). *source* None: the target's template rule."""
        family = translator.family
        if not family.supports("structured"):
            return None
        src = source or target

        async def send(block: str, format_type: str) -> str:
            job = SegmentJob(block, src, target, time.monotonic() + translator.settings.deadline,
                             user, on_event, BULK)
            return await translator.translate_segment(
                job, build=lambda text, s, t: family.prompt("structured", text=text, source=s,
                                                            target=t, format_type=format_type))

        async def check(value: str, answer: str) -> tuple[Finding, ...]:
            await values_prepared(source, target)  # a pair's first time: ~1 s of CPU
            return check_translation(value, answer, source, target)

        return cls(send, check=check if translator.settings.checks else None)

    async def fill(self, pieces: list[Piece], results: list[str | None],
                   format_type: str) -> dict[int, tuple[Finding, ...]]:
        """Fill *results* for the values whose block answer kept them intact; the checks'
        findings of those answers, by piece index."""
        found: dict[int, tuple[Finding, ...]] = {}
        todo = [i for i, p in enumerate(pieces) if p.translate and results[i] is None]
        for block in _blocks(todo, pieces, self.block_chars):
            values = [pieces[i].text.strip() for i in block]
            self.blocks += 1
            self.values += len(values)
            try:
                answer = await self.send(structured_payload(values), format_type)
            except ModelError as err:
                _log.warning("structured-data request failed, values one by one: %s", err)
                continue
            for i, value, got in zip(block, values, read_structured_answer(answer, values),
                                     strict=True):
                if got is None:
                    continue
                text = pieces[i].text
                lead = text[: len(text) - len(text.lstrip())]
                results[i] = pieces[i].written(lead + got.strip() + text[len(text.rstrip()):])
                self.accepted += 1
                if self.check is not None:
                    found[i] = await self.check(value, got.strip())
        return found


def _blocks(todo: list[int], pieces: list[Piece], limit: int) -> list[list[int]]:
    blocks: list[list[int]] = []
    size = 0
    for i in todo:
        length = len(pieces[i].text)
        if blocks and size + length <= limit:
            blocks[-1].append(i)
            size += length
        else:
            blocks.append([i])
            size = length
    return blocks


async def translate_document_rest(
    partial: PartialDocument,
    translate: Translate,
    *,
    resume: Resume | None = None,
    on_progress: ProgressSink | None = None,
    concurrency: int | Callable[[], int] = 4,
    flags: FileFlags | None = None,
) -> str:
    """Translate only what *partial* is missing; finished pieces are not sent again, and
    *flags* starts with what the checks found in them."""
    flags = flags if flags is not None else FileFlags()
    flags.parts.update(partial.flags)
    return await _run_pieces(list(partial.pieces), list(partial.results), dict(partial.inner),
                             translate, resume, on_progress, concurrency, flags)


def _part_of(pieces: list[Piece] | tuple[Piece, ...]) -> dict[int, int]:
    """Each translated piece's part number, as the user counts parts: the Nth translated piece
    in reading order (:func:`file_summary`, :attr:`PartialDocument.part_numbers`)."""
    todo = [i for i, p in enumerate(pieces) if p.translate]
    return {index: number for number, index in enumerate(todo, 1)}


async def _run_pieces(
    pieces: list[Piece] | tuple[Piece, ...],
    results: list[str | None],
    inner: dict[int, PartialTranslation],
    translate: Translate,
    resume: Resume | None,
    on_progress: ProgressSink | None,
    concurrency: int | Callable[[], int],
    flags: FileFlags,
) -> str:
    todo = [i for i, p in enumerate(pieces) if p.translate]
    part = _part_of(pieces)
    missing = [i for i in todo if results[i] is None]
    if not missing:
        return "".join(results)  # type: ignore[arg-type]
    single = len(todo) == 1
    done = before = len(todo) - len(missing)  # before: pieces an earlier run did
    limit = concurrency if callable(concurrency) else (lambda: max(1, int(concurrency)))
    halves: list[PartsCancelled] = []  # pieces cancelled half way (their parts are in inner)

    async def report(count: int, total: int) -> None:
        if on_progress is not None:
            maybe = on_progress(count, total)
            if inspect.isawaitable(maybe):
                await maybe

    async def run(index: int) -> None:
        nonlocal done
        progress = on_progress if single else None
        try:
            earlier = inner.get(index) if resume is not None else None
            results[index], found = await _translate_piece(pieces[index], translate, progress,
                                                           resume, earlier)
        except IncompleteTranslationError as err:
            raise _Unfinished(err) from None
        except PartsCancelled as err:  # cancelled half way through this piece: its parts kept
            if isinstance(err.partial, PartialTranslation):
                inner[index] = err.partial
                halves.append(err)
            raise
        inner.pop(index, None)
        flags.add(part[index], found)
        done += 1
        if not single:
            await report(done, len(todo))

    await report(done, len(todo))
    try:
        failed = await run_bounded([functools.partial(run, i) for i in missing], limit)
    except asyncio.CancelledError as cancel:  # a job's Cancel: the pieces done are kept
        if (done == before and not halves) or isinstance(cancel, PartsCancelled):
            raise  # nothing new to keep
        kept = PartialDocument(tuple(pieces), tuple(results), inner, flags.by_part())
        if single and halves:  # its line counted the one piece's parts: so does the sentence
            raise PartsCancelled(kept, halves[0].done, halves[0].total) from cancel
        raise PartsCancelled(kept, done, len(todo)) from cancel
    if failed:
        for index, err in failed.items():
            if isinstance(err, _Unfinished):
                inner[index] = err.partial
        first = failed[min(failed)]
        cause = first.cause if isinstance(first, _Unfinished) else first
        if done == 0 and not inner:
            raise cause  # nothing to keep: the error itself says it best
        partial = PartialDocument(tuple(pieces), tuple(results), inner, flags.by_part())
        raise IncompleteTranslationError(partial, done, len(todo), partial.part_numbers, cause)
    return "".join(results)  # type: ignore[arg-type]
