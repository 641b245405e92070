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
from pdfminer.layout import (
    LAParams,
    LTChar,
    LTComponent,
    LTContainer,
    LTTextBoxHorizontal,
    LTTextLineHorizontal,
)
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
            out[number] = [block for box in _boxes(layout) for block in _blocks(number, box)]
    except (PSException, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as err:  # pdfminer's own, and what its parser lets through
        _log.warning("%s: its text could not be laid out: %r", label, err)
        raise FormatError(f"{label} is damaged; its text could not be read.").saying(
            "file_damaged") from None
    return out


def _boxes(item: LTComponent) -> Iterator[LTTextBoxHorizontal]:
    if isinstance(item, LTTextBoxHorizontal):
        yield item
    elif isinstance(item, LTContainer):
        for child in item:
            yield from _boxes(child)


def _blocks(page: int, box: LTTextBoxHorizontal) -> Iterator[Block]:
    """*box* as blocks: its lines, cut where the font size changes by more than a sixth (a
    heading close above its paragraph is boxed with it by the layout analysis)."""
    run: list[LTTextLineHorizontal] = []
    size = 0.0
    for line in box:
        if not isinstance(line, LTTextLineHorizontal):
            continue
        chars = [ch for ch in line if isinstance(ch, LTChar)]
        if not chars:
            continue
        own = statistics.median(ch.size for ch in chars)
        if run and abs(own - size) > size / 6:
            if block := _block(page, run):
                yield block
            run = []
        if not run:
            size = own
        run.append(line)
    if run and (block := _block(page, run)):
        yield block


def _block(page: int, lines: list[LTTextLineHorizontal]) -> Block | None:
    texts = [line.get_text().rstrip("\n").strip() for line in lines]
    text = _HYPHEN.sub("", "\n".join(t for t in texts if t))
    text = " ".join(text.split())
    if not text:
        return None
    chars = [ch for line in lines for ch in line if isinstance(ch, LTChar)]
    size = statistics.median(ch.size for ch in chars) if chars else 10.0
    return Block(page, min(line.x0 for line in lines), min(line.y0 for line in lines),
                 max(line.x1 for line in lines), max(line.y1 for line in lines), text,
                 round(size, 2), _colour(chars[0]) if chars else (0.0, 0.0, 0.0))


def _colour(char: LTChar) -> tuple[float, float, float]:
    """The character's fill colour as RGB (gray and RGB spaces; anything else is black)."""
    value = char.graphicstate.ncolor
    if isinstance(value, (int, float)):
        gray = float(value)
        return (gray, gray, gray)
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (float(value[0]), float(value[1]), float(value[2]))
    if isinstance(value, (list, tuple)) and len(value) == 4:  # CMYK, naively
        c, m, y, k = (float(v) for v in value)
        return ((1 - c) * (1 - k), (1 - m) * (1 - k), (1 - y) * (1 - k))
    return (0.0, 0.0, 0.0)
