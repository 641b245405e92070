"""A PDF's pages without a text layer (scans), read by Tesseract: PDFium renders each page
(pypdfium2), :mod:`.picture` finds its paragraphs, and each becomes a block in PDF points with
the colour of the paper around it, which is drawn under its translation to cover the scanned
words."""

from __future__ import annotations

import pypdfium2 as pdfium

from hymt_chat.text.formats.ocr import OcrBlock, Tesseract
from hymt_chat.text.formats.pdf_blocks import Block
from hymt_chat.text.formats.picture import MAX_PIXELS, find_text, surrounding
from hymt_chat.text.formats.safety import FormatError

__all__ = ["MAX_SCANNED_PAGES", "SCAN_DPI", "scanned_blocks"]

MAX_SCANNED_PAGES = 20
"""Pages read by OCR from one PDF: about 5 s each on a 2-core host (docs/pdf-and-images.md),
done when the file arrives, before its translation can be cancelled."""
SCAN_DPI = 200
"""Resolution a page without text is rendered at for OCR (Tesseract reads 10-point text best
from about 200-300 dpi); a page too large for it at that is rendered smaller."""


def scanned_blocks(data: bytes, numbers: list[int], label: str,
                   tesseract: Tesseract) -> dict[int, list[Block]]:
    """The text Tesseract finds on pages *numbers* (0-based), rendered by PDFium, as blocks in
    PDF points, each with the colour of the paper around it (drawn under its translation, to
    cover the scanned words)."""
    document = pdfium.PdfDocument(data)
    out: dict[int, list[Block]] = {}
    try:
        for number in numbers:
            page = document[number]
            width, height = page.get_size()
            scale = min(SCAN_DPI / 72, (MAX_PIXELS / max(width * height, 1)) ** 0.5)
            picture = page.render(scale=scale).to_pil()
            page.close()
            try:
                found = find_text(picture, f"{label} (page {number + 1})", tesseract)
            except FormatError as err:
                if "No text was found" in str(err):
                    continue  # a page of pictures only
                raise
            rgb = picture.convert("RGB")
            out[number] = [_from_pixels(number, height, scale, block, surrounding(rgb, block))
                           for block in found]
    finally:
        document.close()
    return out


def _from_pixels(number: int, height: float, scale: float, block: OcrBlock,
                 paper: tuple[int, ...]) -> Block:
    top, bottom = height - block.top / scale, height - block.bottom / scale
    size = (top - bottom) / max(block.lines, 1) * 0.8
    red, green, blue = (c / 255 for c in paper[:3])
    return Block(number, block.left / scale, bottom, block.right / scale, top, block.text,
                 round(size, 2), fill=(red, green, blue))
