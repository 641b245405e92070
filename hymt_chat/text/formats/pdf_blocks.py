"""A PDF page's text as blocks: each a paragraph, a heading or a table cell, with its box.

pdfminer.six's layout analysis groups a page's characters into lines and lines into text boxes
(``LAParams``: characters closer than ``char_margin`` widths make a line, lines closer than
``line_margin`` heights a box); a table's cells come out as boxes of their own, since the gap
between two cells is wider than a word's. ``all_texts`` takes the text inside form XObjects too,
which is drawn through them. Coordinates are PDF points from the MediaBox's lower left corner,
as pdfminer gives them.
"""

from __future__ import annotations

import io
import logging
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from pdfminer.high_level import extract_pages
from pdfminer.layout import LAParams, LTChar, LTComponent, LTContainer, LTTextBoxHorizontal
from pdfminer.psexceptions import PSException

from hymt_chat.text.formats.safety import FormatError

__all__ = ["Block", "read_blocks"]

_LAYOUT = LAParams(all_texts=True)
_log = logging.getLogger(__name__)
_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")


@dataclass(frozen=True, slots=True)
class Block:
    """One box of text on one page (0-based), in PDF points; ``size`` its usual font size."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    rgb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    fill: tuple[float, float, float] | None = None  # a scanned page's block: the paper's colour


def read_blocks(data: bytes, pages: int, label: str) -> list[list[Block]]:
    """The text blocks of each of the first *pages* pages, top to bottom as pdfminer orders
    them (its ``boxes_flow``: columns read before rows); FormatError if the layout reader
    cannot read the file (:mod:`.pdf_guard` has checked its structure already)."""
    out: list[list[Block]] = [[] for _ in range(pages)]
    try:
        for number, layout in enumerate(extract_pages(io.BytesIO(data), laparams=_LAYOUT)):
            if number >= pages:
                break
            out[number] = [block for box in _boxes(layout) if (block := _block(number, box))]
    except (PSException, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as err:  # pdfminer's own, and what its parser lets through
        _log.warning("%s: its text could not be laid out: %r", label, err)
        raise FormatError(f"{label} is damaged; its text could not be read.") from None
    return out


def _boxes(item: LTComponent) -> Iterator[LTTextBoxHorizontal]:
    if isinstance(item, LTTextBoxHorizontal):
        yield item
    elif isinstance(item, LTContainer):
        for child in item:
            yield from _boxes(child)


def _block(page: int, box: LTTextBoxHorizontal) -> Block | None:
    lines = [line.get_text().rstrip("\n").strip() for line in box]
    text = _HYPHEN.sub("", "\n".join(line for line in lines if line))
    text = " ".join(text.split())
    if not text:
        return None
    chars = [ch for line in box for ch in line if isinstance(ch, LTChar)]
    size = statistics.median(ch.size for ch in chars) if chars else 10.0
    return Block(page, box.x0, box.y0, box.x1, box.y1, text, round(size, 2),
                 _colour(chars[0]) if chars else (0.0, 0.0, 0.0))


def _colour(char: LTChar) -> tuple[float, float, float]:
    """The character's fill colour as RGB (gray and RGB spaces; anything else is black)."""
    value = char.graphicstate.ncolor
    if isinstance(value, (int, float)):
        return (float(value),) * 3  # type: ignore[return-value]
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (float(value[0]), float(value[1]), float(value[2]))
    if isinstance(value, (list, tuple)) and len(value) == 4:  # CMYK, naively
        c, m, y, k = (float(v) for v in value)
        return ((1 - c) * (1 - k), (1 - m) * (1 - k), (1 - y) * (1 - k))
    return (0.0, 0.0, 0.0)
