"""Documents of other kinds than text: read into units of tagged text, written back the same kind.

The one entry point is :func:`read_source` (name and bytes -> :class:`Source`); a Source's
``units`` are what to translate (``Hello <b id="1">bold</b> world``), ``write(translations)`` the
translated file's bytes. :mod:`hymt_chat.modes.documents` drives it like its text formats
(pieces, limits, progress, a ``.partial`` file, Retry the rest), and so can any API.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import PurePath

from lxml import etree

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.epub import read_epub
from hymt_chat.text.formats.odf import read_odf
from hymt_chat.text.formats.ooxml import read_docx, read_pptx, read_refused, read_xlsx
from hymt_chat.text.formats.pdf import read_pdf
from hymt_chat.text.formats.picture import read_picture
from hymt_chat.text.formats.safety import FormatError
from hymt_chat.text.formats.webpage import read_html
from hymt_chat.text.formats.xliff import read_xliff

__all__ = ["CONVERSIONS", "FORMATS", "PICTURES", "REFUSED", "FormatError", "Source", "Unit", "read_source"]

Reader = Callable[[bytes, str], Source]
Rereader = Callable[[bytes, str, object], Source]
_log = logging.getLogger(__name__)
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

# extension -> (kind, MIME type of the file sent back, reader)
FORMATS: dict[str, tuple[str, str, Reader]] = {
    ".docx": ("docx", _DOCX, read_docx),
    ".pptx": ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation",
              read_pptx),
    ".xlsx": ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
              read_xlsx),
    ".odt": ("odt", "application/vnd.oasis.opendocument.text", read_odf),
    ".odp": ("odp", "application/vnd.oasis.opendocument.presentation", read_odf),
    ".ods": ("ods", "application/vnd.oasis.opendocument.spreadsheet", read_odf),
    ".html": ("html", "text/html", read_html),
    ".htm": ("html", "text/html", read_html),
    ".xlf": ("xliff", "application/xliff+xml", read_xliff),
    ".xliff": ("xliff", "application/xliff+xml", read_xliff),
    ".epub": ("epub", "application/epub+zip", read_epub),
    ".pdf": ("pdf", "application/pdf", read_pdf),
    ".png": ("png", "image/png", read_picture),
    ".jpg": ("jpeg", "image/jpeg", read_picture),
    ".jpeg": ("jpeg", "image/jpeg", read_picture),
    ".webp": ("webp", "image/webp", read_picture),
}
PICTURES = frozenset({"png", "jpeg", "webp"})
"""Kinds whose text is found by OCR: the answer lists it, block by block, with its translation."""
_REREADERS: dict[str, Rereader] = {"pdf": read_pdf, **{kind: read_picture for kind in PICTURES}}
CONVERSIONS: dict[str, dict[str, str]] = {"pdf": {"docx": _DOCX}}
"""kind -> the other kinds it can be written as (kind -> MIME type): a PDF as an editable .docx,
as DeepL's document API offers (``output_format``)."""
REFUSED = frozenset({".docm", ".xlsm", ".pptm", ".dotm", ".xltm", ".potm", ".ppsm"})
"""Macro-enabled Office files: named so that the refusal says why."""


def read_source(name: str, data: bytes, found: object = None) -> Source:
    """Parse *data* as the format its *name* says; FormatError (one sentence) if it is not.
    *found* is a first read's ``Source.found``: a second read starts from it (no second OCR).
    The error's page sentence (``err.said``) names the file: its slot ``name``."""
    try:
        return _read(name, data, found)
    except FormatError as err:
        if err.said is not None:
            err.saying(err.said.key, **{**err.said.slots, "name": PurePath(name).name})
        raise


def _read(name: str, data: bytes, found: object) -> Source:
    suffix = PurePath(name).suffix.lower()
    label = repr(PurePath(name).name)
    if suffix in REFUSED:
        read_refused(label)
    kind, _, reader = FORMATS[suffix]
    try:
        if found is not None and kind in _REREADERS:
            return _REREADERS[kind](data, label, found)
        return reader(data, label)
    except FormatError:
        raise
    except (ValueError, etree.LxmlError) as err:  # what the checks above did not foresee
        _log.warning("%s could not be read: %r", label, err)
        raise FormatError(f"{label} is damaged or not what its name says; it could not be "
                          "read.").saying("file_damaged") from None
