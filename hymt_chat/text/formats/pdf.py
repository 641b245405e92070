"""PDF with a text layer: each text block translated in place, in its own box; the rest kept.

Reading: :mod:`.pdf_guard` opens the file under its caps (and removes active content), then
:mod:`.pdf_blocks` finds each page's text blocks with their boxes (:mod:`.pdf_scan` a scanned
page's, by OCR); a block with letters is a unit. Writing starts again from the uploaded bytes each time:

1. every text-showing operator (``Tj``, ``TJ``, ``'``, ``"``; ISO 32000-1 §9.4.3) is removed from
   the content streams of the pages that have blocks and of the form XObjects they draw; every
   other operator stays, so images, vector graphics, colours and clipping are as they were;
2. a page of the same size is drawn (:mod:`.pdf_draw`, reportlab) holding each block's text —
   its translation, or its own words for a block without letters (a number, a date) — in its
   box, in a font with the glyphs of its script, embedded as a subset;
3. that page is laid over the original one (pikepdf's ``Page.add_overlay``: a form XObject),
   so the page's annotations — links among them —, its size and its boxes are untouched.

A page turned by ``/Rotate`` (the overlay would be drawn turned), and a page whose text is in
a font that does not map its glyphs to characters (pdfminer reads ``(cid:65)``: nothing to
translate), keep their text as it was: the summary says how many.
"""

from __future__ import annotations

import io
import logging
import re
import zlib
from collections.abc import Sequence

import docx
import pikepdf

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import escape, plain_of
from hymt_chat.text.formats.ocr import Tesseract
from hymt_chat.text.formats.pdf_blocks import Block, read_blocks
from hymt_chat.text.formats.pdf_draw import draw_pages
from hymt_chat.text.formats.pdf_fonts import FontBook
from hymt_chat.text.formats.pdf_guard import open_pdf
from hymt_chat.text.formats.pdf_scan import MAX_SCANNED_PAGES, scanned_blocks
from hymt_chat.text.formats.safety import FormatError
from hymt_chat.words.said import Said, said

__all__ = ["read_pdf", "write_docx", "write_pdf"]

_SHOW = frozenset({"Tj", "TJ", "'", '"'})
_log = logging.getLogger(__name__)
_CID = re.compile(r"\(cid:\d+\)")


def read_pdf(data: bytes, label: str, found: object = None) -> Source:
    """The PDF *data* as units, one per text block with letters; a page without a text layer
    is read by OCR (:func:`scanned_blocks`). *found*: a first read's blocks, taken as they are."""
    opened = open_pdf(data, label)
    with opened.pdf as pdf:
        untouched = [i for i, page in enumerate(pdf.pages)
                     if int(page.obj.get("/Rotate", 0)) % 360]
        pictured = [i for i, page in enumerate(pdf.pages) if _draws_objects(page)]
        count = len(pdf.pages)
    unread = 0
    if isinstance(found, tuple):
        blocks = list(found)
    else:
        pages = read_blocks(data, count, label)
        # A font without a map to characters reads as "(cid:12)": its page is left as it was.
        unmapped = [n for n, page in enumerate(pages) if any(_CID.search(b.text) for b in page)]
        untouched += [n for n in unmapped if n not in untouched]
        scans = [n for n in pictured if not pages[n] and n not in untouched]
        if len(scans) > MAX_SCANNED_PAGES:
            raise FormatError(f"{label} has {len(scans)} scanned pages (no text layer); at most "
                              f"{MAX_SCANNED_PAGES} are read by OCR at once: split it and send "
                              "the parts.").saying("pdf_scans", pages=len(scans),
                                                   most=MAX_SCANNED_PAGES)
        tesseract = Tesseract.find() if scans else None
        if tesseract is not None:
            for number, page_blocks in scanned_blocks(data, scans, label, tesseract).items():
                pages[number] = page_blocks
        else:
            unread = len(scans)
        blocks = [b for number, page in enumerate(pages) if number not in untouched for b in page]
    if not blocks:
        raise FormatError(f"{label} has no text layer and no text was found in its "
                          "pages.").saying("pdf_no_text")
    words = [i for i, b in enumerate(blocks) if any(ch.isalpha() for ch in b.text)]
    texts: list[str] = [b.text for b in blocks]

    def setter(i: int) -> Unit:
        def put(translated: str) -> None:
            texts[i] = plain_of(translated)
        return Unit(escape(blocks[i].text), put)

    units = [setter(i) for i in words]

    def as_docx(translations: Sequence[str]) -> bytes:
        for unit, text in zip(units, translations, strict=True):
            unit.put(text)
        return write_docx(blocks, texts)

    kept = [said("kept_pdf_layout")]
    if untouched:
        kept.append(said("kept_pdf_unreadable", pages=_pages(len(untouched))))
    scanned = len({b.page for b in blocks if b.fill is not None})
    if scanned:
        kept.append(said("kept_pdf_scans", pages=_pages(scanned)))
    if unread:
        kept.append(said("kept_pdf_no_text_layer", pages=_pages(unread)))
    return Source(units, lambda: write_pdf(data, blocks, texts), kept, removed=opened.removed,
                  found=tuple(blocks), converters={"docx": as_docx})


def _pages(count: int) -> Said:
    return said("page_count", count=count)


def _draws_objects(page: pikepdf.Page) -> bool:
    """Whether *page* draws an image or a form (what a scan's page is made of)."""
    resources = page.obj.get("/Resources")
    xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
    return isinstance(xobjects, pikepdf.Dictionary) and len(xobjects.keys()) > 0


def write_docx(blocks: Sequence[Block], texts: Sequence[str]) -> bytes:
    """The blocks' texts as an editable .docx: a paragraph each in reading order, a page break
    where the PDF's page ends (the layout itself is the PDF's, not kept)."""
    document = docx.Document()
    page = blocks[0].page if blocks else 0
    for block, text in zip(blocks, texts, strict=True):
        if block.page != page:
            document.add_page_break()  # type: ignore[no-untyped-call]  # python-docx's own
            page = block.page
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def write_pdf(data: bytes, blocks: Sequence[Block], texts: Sequence[str]) -> bytes:
    """*data* with each block's text replaced by ``texts[i]`` (see the module's steps)."""
    try:
        return _write(data, blocks, texts, FontBook())
    except pikepdf.PdfError as err:  # a content stream qpdf cannot parse: said, not a crash
        _log.warning("a PDF could not be written back: %r", err)
        raise FormatError("The PDF could not be written back: a page's content is "
                          "damaged.").saying("pdf_write") from None


def _write(data: bytes, blocks: Sequence[Block], texts: Sequence[str], fonts: FontBook) -> bytes:
    opened = open_pdf(data, "the PDF")
    with opened.pdf as pdf:
        pages = sorted({b.page for b in blocks})
        sizes = {}
        for number in pages:
            page = pdf.pages[number]
            box = page.mediabox
            sizes[number] = (float(box[2]) - float(box[0]), float(box[3]) - float(box[1]))
            _strip_text(pdf, page.obj, set())
        with pikepdf.open(io.BytesIO(draw_pages(pages, sizes, blocks, texts, fonts))) as overlay:
            for k, number in enumerate(pages):
                page = pdf.pages[number]
                form = pdf.copy_foreign(overlay.pages[k].as_form_xobject())
                # Its BBox is the page's size from (0, 0); the MediaBox's corner may be elsewhere.
                page.add_overlay(form, pikepdf.Rectangle(page.mediabox))
            out = io.BytesIO()
            # Streams copied byte for byte (qpdf would otherwise re-encode images); the ones
            # written here are compressed as they are written.
            pdf.save(out, compress_streams=False)
    return out.getvalue()


def _strip_text(pdf: pikepdf.Pdf, holder: pikepdf.Object, seen: set[tuple[int, int]]) -> None:
    """Remove the text-showing operators from *holder*'s content (a page, or a form XObject)
    and from the forms it draws, each form once."""
    if isinstance(holder, pikepdf.Stream):
        _rewrite(holder, _without_text(pikepdf.parse_content_stream(holder)))
    else:
        page = pikepdf.Page(holder)
        if "/Contents" not in holder:
            return
        page.contents_coalesce()
        contents = page.obj.Contents
        if isinstance(contents, pikepdf.Stream):
            _rewrite(contents, _without_text(pikepdf.parse_content_stream(page.obj)))
    resources = holder.get("/Resources")
    xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
    if not isinstance(xobjects, pikepdf.Dictionary):
        return
    for key in list(xobjects.keys()):
        xobj = xobjects[key]
        if not isinstance(xobj, pikepdf.Stream) or xobj.get("/Subtype") != "/Form":
            continue
        ident = xobj.objgen
        if ident in seen:
            continue
        seen.add(ident)
        _strip_text(pdf, xobj, seen)


def _rewrite(stream: pikepdf.Stream, content: bytes) -> None:
    stream.write(zlib.compress(content), filter=pikepdf.Name.FlateDecode)


def _without_text(instructions: list[pikepdf.ContentStreamInstruction
                                   | pikepdf.ContentStreamInlineImage]) -> bytes:
    kept = [ins for ins in instructions
            if isinstance(ins, pikepdf.ContentStreamInlineImage) or str(ins.operator) not in _SHOW]
    return pikepdf.unparse_content_stream(kept)


