"""Opening a PDF without trusting it: every cap is checked on the file's structure, before a
page is laid out, a stream is decoded for text or an image is rendered.

A PDF is a graph of objects read lazily (qpdf, through pikepdf). What an upload can do to a
reader, and what stops it here:

* **many pages** (a page tree of 100,000 pages fits in 2 MB with object streams): the page tree's
  own ``/Count`` is read first, then the pages themselves; more than :data:`MAX_PAGES` is refused;
* **a huge page**: ISO 32000-1 Annex C.2 bounds a page to 14,400 x 14,400 default units (200
  inches); a MediaBox over that (``/UserUnit`` counted) is refused;
* **deep nesting**: qpdf stops parsing at 500 levels and says so (a warning, the object read as
  null); that warning refuses the file, so that no reader after it walks the nest;
* **decompression bombs**: every Flate stream is inflated through a counter in 1 MiB steps and
  the file is refused past :data:`MAX_INFLATED` in all (LZW, whose ratio is as bad, only in small
  streams); image codecs (JBIG2, JPX, DCT, CCITT) are never decoded for a text PDF, and an image
  declaring more than :data:`MAX_IMAGE_PIXELS` is refused from its dictionary;
* **encryption**: a password-protected PDF, or one whose owner restricted changes, is refused;
* **active content**: JavaScript (the document's and the pages' actions, the ``/JavaScript``
  name tree) and embedded files are **removed**, forms are **flattened** (their values printed
  into the page, no longer fillable), and the file says so (:attr:`Opened.removed`).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import pikepdf

from hymt_chat.text.formats.safety import FormatError
from hymt_chat.words.said import Said, said

__all__ = ["MAX_IMAGE_PIXELS", "MAX_INFLATED", "MAX_PAGES", "MAX_PAGE_UNITS", "Opened",
           "open_pdf", "viewable"]

MAX_PAGES = 500
"""Pages read from one PDF: 2 MB of text PDF is at most a few hundred pages of prose, and the
characters limit (HYMT_MAX_INPUT_CHARS) holds about 80 dense pages anyway."""
MAX_PAGE_UNITS = 14_400.0
"""ISO 32000-1 Annex C.2: the largest page a conforming PDF has (200 inches a side)."""
MAX_IMAGE_PIXELS = 40_000_000
"""An image's declared Width x Height: a 600 dpi A3 scan is 35 million pixels."""
MAX_INFLATED = 64 * 1024 * 1024
"""Bytes all Flate streams of one file may inflate to (as formats.safety.MAX_UNPACKED)."""
MAX_LZW_RAW = 16 * 1024
"""LZW streams are decoded whole by the layout reader: one this small inflates to 44 MB at most."""
_CHUNK = 1 << 20
_ACTIONS = ("/AA", "/OpenAction")


@dataclass(slots=True)
class Opened:
    """A PDF that passed the checks, with what was taken out of it."""

    pdf: pikepdf.Pdf
    removed: list[Said] = field(default_factory=list)


def open_pdf(data: bytes, label: str) -> Opened:
    """Open *data* under the caps, active content removed; FormatError (one sentence) if not."""
    if b"%PDF-" not in data[:1024]:
        raise FormatError(f"{label} is not a PDF (it has no PDF header).").saying(
            "pdf_no_header")
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PasswordError:
        raise FormatError(f"{label} is protected by a password: save it without one and send "
                          "it again.").saying("file_protected") from None
    except pikepdf.PdfError:
        raise FormatError(f"{label} is damaged or not a PDF; it could not be read.").saying(
            "file_damaged") from None
    try:
        _check(pdf, label)
        removed = _disarm(pdf)
    except pikepdf.PdfError:
        pdf.close()
        raise FormatError(f"{label} is damaged; its structure could not be read.").saying(
            "file_damaged") from None
    except FormatError:
        pdf.close()
        raise
    return Opened(pdf, removed)


def viewable(data: bytes) -> bool:
    """Would a PDF viewer open *data*: a PDF header, a structure qpdf reads (repaired if need
    be), no password, some page? What the chat page's own PDF viewer is shown for; reading
    the file for translation (:func:`open_pdf`) checks it under the caps."""
    if b"%PDF-" not in data[:1024]:
        return False
    try:
        with pikepdf.open(io.BytesIO(data)) as pdf:
            pages = pdf.Root.get("/Pages")
            count = pages.get("/Count", 0) if isinstance(pages, pikepdf.Dictionary) else 0
            return isinstance(count, int) and count > 0
    except (pikepdf.PdfError, pikepdf.PasswordError, ValueError, TypeError, AttributeError):
        return False


def _check(pdf: pikepdf.Pdf, label: str) -> None:
    if pdf.is_encrypted:
        raise FormatError(f"{label} is encrypted (its owner restricted changes): save it "
                          "without protection and send it again.").saying("file_protected")
    pages = pdf.Root.get("/Pages")
    declared = pages.get("/Count", 0) if isinstance(pages, pikepdf.Dictionary) else 0
    if not isinstance(declared, int) or declared > MAX_PAGES:
        raise _too_many(label, declared)
    if len(pdf.pages) > MAX_PAGES:
        raise _too_many(label, len(pdf.pages))
    if not len(pdf.pages):
        raise FormatError(f"{label} has no pages.").saying("pdf_no_pages")
    for number, page in enumerate(pdf.pages, 1):
        box = page.mediabox
        unit = float(page.obj.get("/UserUnit", 1))
        width = abs(float(box[2]) - float(box[0])) * unit
        height = abs(float(box[3]) - float(box[1])) * unit
        if max(width, height) > MAX_PAGE_UNITS:
            raise FormatError(f"{label}: page {number} is {width / 72:,.0f} x {height / 72:,.0f} "
                              f"inches; a PDF page is at most 200 inches a side: "
                              "refused.").saying("pdf_page_size", page=number)
    inflated = 0
    for obj in _objects(pdf):
        if not isinstance(obj, pikepdf.Stream):
            continue
        if obj.get("/Subtype") == "/Image":
            pixels = int(obj.get("/Width", 0)) * int(obj.get("/Height", 0))
            if pixels > MAX_IMAGE_PIXELS:
                raise FormatError(f"{label} holds an image of {pixels / 1e6:,.0f} million "
                                  f"pixels; at most {MAX_IMAGE_PIXELS // 1_000_000} million "
                                  "are read: refused, as an image bomb would be."
                                  ).saying("file_unsafe")
            continue
        inflated += _inflated_size(obj, label, MAX_INFLATED - inflated)
    if _nested(pdf):
        raise FormatError(f"{label} nests its objects deeper than a PDF reader follows "
                          "(the shape of a parser bomb): refused.").saying("file_unsafe")


def _objects(pdf: pikepdf.Pdf) -> Iterator[pikepdf.Object]:
    """Every indirect object, each parsed once (qpdf parses lazily: this is where a nest or a
    malformed object shows)."""
    yield from pdf.objects


def _nested(pdf: pikepdf.Pdf) -> bool:
    return any("nested" in warning for warning in pdf.get_warnings())


def _filters(stream: pikepdf.Stream) -> list[str]:
    raw = stream.get("/Filter")
    if raw is None:
        return []
    if isinstance(raw, pikepdf.Array):
        return [str(f) for f in raw]
    return [str(raw)]


def _inflated_size(stream: pikepdf.Stream, label: str, room: int) -> int:
    """Bytes *stream*'s first Flate filter gives, counted as it inflates, refused past *room*."""
    filters = _filters(stream)
    if "/LZWDecode" in filters and len(stream.read_raw_bytes()) > MAX_LZW_RAW:
        raise FormatError(f"{label} uses large LZW-compressed streams (an old compression whose "
                          "output cannot be bounded cheaply): save it again as a current "
                          "PDF.").saying("pdf_old_compression")
    if not filters or filters[0] != "/FlateDecode":
        return 0
    inflater = zlib.decompressobj()
    raw = stream.read_raw_bytes()
    total = 0
    try:
        pending = raw
        while pending:
            out = inflater.decompress(pending, _CHUNK)
            total += len(out)
            if total > room:
                raise FormatError(f"{label} inflates to more than {MAX_INFLATED // 1_048_576} "
                                  "MB: refused, as a decompression bomb would be."
                                  ).saying("file_unsafe")
            pending = inflater.unconsumed_tail
            if not out:
                break
    except zlib.error:
        return total  # a damaged stream: qpdf and the layout reader recover what they can
    return total


def _too_many(label: str, count: object) -> FormatError:
    shown = f"{count:,}" if isinstance(count, int) else "an unreadable number of"
    err = FormatError(f"{label} has {shown} pages; at most {MAX_PAGES} are translated at once: "
                      "split it and send the parts.")
    if isinstance(count, int):
        return err.saying("pdf_pages", pages=count, most=MAX_PAGES)
    return err.saying("file_too_much")


def _disarm(pdf: pikepdf.Pdf) -> list[Said]:
    """Remove JavaScript and embedded files, flatten forms; say what was done, in phrases."""
    removed: list[Said] = []
    root = pdf.Root
    script = False
    names = root.get("/Names")
    if isinstance(names, pikepdf.Dictionary):
        if "/JavaScript" in names:
            del names["/JavaScript"]
            script = True
        if "/EmbeddedFiles" in names:
            del names["/EmbeddedFiles"]
            removed.append(said("removed_embedded_files"))
    for holder in (root, *(page.obj for page in pdf.pages)):
        for key in _ACTIONS:
            if key in holder:
                del holder[key]
                script = True
    attachments = 0
    for page in pdf.pages:
        annots = page.obj.get("/Annots")
        if not isinstance(annots, pikepdf.Array):
            continue
        kept = pikepdf.Array()
        for annot in annots:
            if annot.get("/Subtype") == "/FileAttachment":
                attachments += 1
                continue
            action = annot.get("/A")
            if isinstance(action, pikepdf.Dictionary) and action.get("/S") == "/JavaScript":
                del annot["/A"]
                script = True
            if "/AA" in annot:
                del annot["/AA"]
                script = True
            kept.append(annot)
        page.obj.Annots = kept
    if attachments and said("removed_embedded_files") not in removed:
        removed.append(said("removed_embedded_files"))
    if script:
        removed.insert(0, said("removed_javascript"))
    if "/AcroForm" in root:
        pdf.flatten_annotations("all")  # widgets' appearances drawn into the page
        if "/AcroForm" in root:
            del root["/AcroForm"]
        for page in pdf.pages:  # a field without an appearance has nothing to flatten
            annots = page.obj.get("/Annots")
            if isinstance(annots, pikepdf.Array):
                page.obj.Annots = pikepdf.Array(
                    [a for a in annots if a.get("/Subtype") != "/Widget"])
        removed.append(said("removed_form_fields"))
    return removed
