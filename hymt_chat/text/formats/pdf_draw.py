"""Each block's text drawn in its box on a page of its own (reportlab), to be laid over the
original page: from the block's font size down until it fits (the box first widened, then
deepened), in a font with the glyphs of its script (:mod:`.pdf_fonts`, embedded as a subset),
shaped through HarfBuzz where the script needs it."""

from __future__ import annotations

import html
import io
from collections.abc import Sequence

from reportlab.lib.colors import Color
from reportlab.lib.enums import TA_LEFT, TA_RIGHT
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Paragraph

from hymt_chat.text.formats.pdf_blocks import Block
from hymt_chat.text.formats.pdf_fonts import FontBook, script_of

__all__ = ["GROWTH", "MIN_SIZE", "draw_pages"]

MIN_SIZE = 4.0
"""The smallest font size a translation is shrunk to; below it, it runs past its box."""
_RTL = frozenset({"ARABIC", "HEBREW"})
_SHAPED = frozenset({"ARABIC", "DEVANAGARI", "BENGALI", "GUJARATI", "TAMIL", "TELUGU", "THAI",
                     "KHMER", "MYANMAR", "TIBETAN", "MONGOLIAN"})
"""Scripts whose letters change shape or order with their neighbours: drawn through HarfBuzz
(reportlab's ``shaping``; a Devanagari vowel sign before its consonant, Thai marks stacked).
Their glyphs then carry no Unicode of their own in some cases, so a reader copying the text
may get private-use characters: what they look like wins over what copies."""


def draw_pages(pages: list[int], sizes: dict[int, tuple[float, float]],
               blocks: Sequence[Block], texts: Sequence[str], fonts: FontBook) -> bytes:
    """One reportlab page per page in *pages*, each block's text in its box."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=sizes[pages[0]] if pages else (595, 842), pageCompression=1)
    for number in pages:
        canvas.setPageSize(sizes[number])
        here = [b for b in blocks if b.page == number]
        right = sizes[number][0] - min(b.x0 for b in here)  # margins taken as even
        for block, text in zip(blocks, texts, strict=True):
            if block.page == number and text.strip():
                _fit(canvas, block, text, fonts,
                     _room_right(block, here, right), _room_below(block, here))
        canvas.showPage()
    canvas.save()
    return out.getvalue()


GROWTH = 1.5
"""How much taller than its block a translation may run where no text is below it, before it
gets smaller: a translation is often a third longer than its source (German from English), and
a one-line block shrunk to fit would be unreadable. Widening comes first (:func:`_room_right`):
below a block there is more often a picture, which the blocks do not show."""


def _room_right(block: Block, page: Sequence[Block], margin: float) -> float:
    """Points right of *block* it may take: up to the next text beside it (a table's next cell,
    4 points apart) or the right margin (the left one, mirrored)."""
    edge = max(margin, block.x1)
    for other in page:
        if other is not block and other.x0 >= block.x1 and other.y0 < block.y1 and (
                other.y1 > block.y0):
            edge = min(edge, other.x0 - 4)
    return max(edge - block.x1, 0.0)


def _room_below(block: Block, page: Sequence[Block]) -> float:
    """Points below *block* it may take: down to the next text under it (2 points apart), at
    most GROWTH times its own height in all."""
    height = block.y1 - block.y0
    floor = block.y0 - (GROWTH - 1) * height
    for other in page:
        if other is not block and other.y1 <= block.y0 and other.x0 < block.x1 and (
                other.x1 > block.x0):
            floor = max(floor, other.y1 + 2)
    return max(block.y0 - floor, 0.0)


def _fit(canvas: Canvas, block: Block, text: str, fonts: FontBook, right: float = 0.0,
         below: float = 0.0) -> None:
    """Draw *text* from the top of *block*'s box, its size shrunk until it fits in the box
    widened by *right* points and deepened by *below* (at least MIN_SIZE)."""
    width = max(block.x1 - block.x0, 1.0) + 2.0 + right  # the box is tight to the glyphs
    height = block.y1 - block.y0 + below
    font = fonts.font_for(text)
    script = script_of(text)
    size = max(block.size, MIN_SIZE)
    if block.fill is not None:  # a scan: its words are pixels, covered by the paper's colour
        canvas.setFillColorRGB(*block.fill)
        canvas.rect(block.x0 - 1, block.y0 - 1, block.x1 - block.x0 + 2, block.y1 - block.y0 + 2,
                    stroke=0, fill=1)
    while True:
        style = ParagraphStyle(
            "block", fontName=font, fontSize=size, leading=size * 1.15,
            textColor=Color(*block.rgb), alignment=TA_RIGHT if script in _RTL else TA_LEFT,
            wordWrap="CJK" if font.startswith("hymt-wqy") else None,
            shaping=1 if script in _SHAPED else 0)
        para = Paragraph(html.escape(text, quote=False), style)
        _, used = para.wrap(width, 10 * height + 1000)
        if used <= height * 1.05 + size * 0.3 or size <= MIN_SIZE:
            break
        size = max(MIN_SIZE, size * 0.9)
    para.drawOn(canvas, block.x0, block.y1 - used)
