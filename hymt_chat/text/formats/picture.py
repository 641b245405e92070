"""Pictures (.png, .jpg/.jpeg, .webp): the text Tesseract finds, and the same picture with the
translation laid over the boxes it was found in.

Before a pixel is decoded the header is read (Pillow's ``Image.open`` reads only the header):
a picture of more than :data:`MAX_PIXELS` is refused from its declared size, whatever its file
size (a 40,000 x 40,000 PNG of one colour is a few hundred kilobytes and 4.8 GB decoded). A
picture that does not decode whole is refused as damaged. A phone photo is turned upright by its
EXIF orientation first.

Each paragraph :mod:`.ocr` finds is a unit. Written back, each box is filled with the colour
around it and the translation drawn in it, in a Noto font of its script (:mod:`.pdf_fonts`),
shrunk until it fits, through Pillow's Raqm layout where Pillow has it (bidirectional text and
shaping: Arabic, Hebrew, the Indic scripts); the file is the same kind as the one sent.
"""

from __future__ import annotations

import io
import logging
import re
import statistics
import subprocess
from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont, ImageOps, UnidentifiedImageError, features

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import escape, plain_of
from hymt_chat.text.formats.ocr import OcrBlock, Tesseract
from hymt_chat.text.formats.pdf_fonts import FontBook, script_of
from hymt_chat.text.formats.safety import FormatError
from hymt_chat.words.said import said

__all__ = ["MAX_PIXELS", "find_text", "open_picture", "overlay", "read_picture", "surrounding"]

MAX_PIXELS = 40_000_000
"""Pixels a picture may declare (a 12-megapixel phone photo is 12 million; 40 million decoded
as RGB is 120 MB)."""
_FORMATS = {"PNG": "PNG", "JPEG": "JPEG", "WEBP": "WEBP"}
_log = logging.getLogger(__name__)
_SERVED_SCRIPTS = frozenset({
    "Latin", "Cyrillic", "Arabic", "Hebrew", "Devanagari", "Gujarati", "Bengali", "Tamil",
    "Telugu", "Thai", "Khmer", "Myanmar", "Tibetan", "Japanese", "Katakana", "Hiragana",
    "Hangul", "Korean", "Han", "Mongolian"})


def open_picture(data: bytes, label: str) -> Image.Image:
    """The picture decoded and upright, or FormatError; its size is checked from the header."""
    try:
        picture = Image.open(io.BytesIO(data), formats=list(_FORMATS))
    except Image.DecompressionBombError as err:  # Pillow's own cap, from the header too
        declared = re.search(r"\((\d+) pixels\)", str(err))
        raise _too_big(label, int(declared.group(1)) if declared else None) from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise FormatError(f"{label} is damaged or not a PNG, JPEG or WebP picture.").saying(
            "file_damaged") from None
    width, height = picture.size
    if width * height > MAX_PIXELS:
        raise _too_big(label, width * height)
    try:
        picture.load()
        upright = ImageOps.exif_transpose(picture)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise FormatError(f"{label} is damaged: the picture could not be decoded "
                          "whole.").saying("file_damaged") from None
    return upright if upright is not None else picture


def _too_big(label: str, pixels: int | None) -> FormatError:
    shown = f"{pixels / 1e6:,.0f} million" if pixels else "too many"
    return FormatError(f"{label} declares {shown} pixels; at most {MAX_PIXELS // 1_000_000} "
                       "million are read: refused before decoding, as a pixel bomb would "
                       "be.").saying("picture_too_big", most=MAX_PIXELS // 1_000_000)


def find_text(picture: Image.Image, label: str, tesseract: Tesseract | None = None,
              source: str | None = None) -> list[OcrBlock]:
    """The paragraphs in *picture*, in reading order; FormatError when there are none, or when
    their script is one that none of the model's languages is written in."""
    tesseract = tesseract or Tesseract.find()
    if tesseract is None:
        raise FormatError(f"{label} is a picture, and reading text in pictures needs Tesseract, "
                          "which is not installed on this server.").saying("picture_no_ocr")
    buf = io.BytesIO()
    picture.convert("RGB").save(buf, "PNG")
    png = buf.getvalue()
    try:
        script = None if source else tesseract.script(png)
        if script is not None and script not in _SERVED_SCRIPTS:
            raise FormatError(f"The text in {label} is in the {script} script, which none of the "
                              "languages this server translates is written in.").saying(
                "picture_script", script=script)
        blocks = tesseract.read(png, tesseract.choose(script, source))
    except (OSError, subprocess.SubprocessError) as err:
        _log.warning("%s: Tesseract failed: %r", label, err)
        raise FormatError(f"The text in {label} could not be read: Tesseract failed on "
                          "it.").saying("picture_failed") from None
    if not blocks:
        raise FormatError(f"No text was found in {label}.").saying("picture_no_text")
    return blocks


def read_picture(data: bytes, label: str, found: object = None) -> Source:
    """A picture as units, one per paragraph found (or the *found* blocks of a first read);
    written back as the same kind of file with the translation laid over."""
    picture = open_picture(data, label)
    kind = _FORMATS[str(Image.open(io.BytesIO(data)).format)]
    blocks = list(found) if isinstance(found, tuple) else find_text(picture, label)
    texts = [b.text for b in blocks]

    def unit(i: int) -> Unit:
        def put(translated: str) -> None:
            texts[i] = plain_of(translated)
        return Unit(escape(blocks[i].text), put)

    def serialize() -> bytes:
        out = io.BytesIO()
        drawn = overlay(picture, blocks, texts, FontBook())
        (drawn.convert("RGB") if kind == "JPEG" else drawn).save(out, kind)
        return out.getvalue()

    return Source([unit(i) for i in range(len(blocks))], serialize,
                  [said("kept_picture")], found=tuple(blocks))


def overlay(picture: Image.Image, blocks: Sequence[OcrBlock], texts: Sequence[str],
            fonts: FontBook) -> Image.Image:
    """*picture* with each block's box filled with its surrounding colour and ``texts[i]``
    drawn in it."""
    out = picture.convert("RGBA" if picture.mode in ("RGBA", "LA", "P") else "RGB")
    draw = ImageDraw.Draw(out)
    for block, text in zip(blocks, texts, strict=True):
        background = surrounding(out, block)
        ink = (0, 0, 0) if sum(background[:3]) > 382 else (255, 255, 255)
        pad = 2
        draw.rectangle((block.left - pad, block.top - pad, block.right + pad, block.bottom + pad),
                       fill=background)
        _draw_fitted(draw, block, text, ink, fonts)
    return out


def surrounding(picture: Image.Image, block: OcrBlock) -> tuple[int, ...]:
    """The median colour of a thin ring just outside *block*'s box: the paper or the sign."""
    width, height = picture.size
    left, top = max(block.left - 4, 0), max(block.top - 4, 0)
    right, bottom = min(block.right + 4, width - 1), min(block.bottom + 4, height - 1)
    points = [(x, y) for x in range(left, right + 1, max(1, (right - left) // 20))
              for y in (top, bottom)]
    points += [(x, y) for y in range(top, bottom + 1, max(1, (bottom - top) // 10))
               for x in (left, right)]
    ring: list[tuple[int, ...]] = []
    for point in points:
        pixel = picture.getpixel(point)
        ring.append(tuple(int(c) for c in pixel) if isinstance(pixel, tuple)
                    else (int(pixel or 0),) * 3)
    return tuple(int(statistics.median(c[i] for c in ring)) for i in range(len(ring[0])))


def _draw_fitted(draw: ImageDraw.ImageDraw, block: OcrBlock, text: str,
                 ink: tuple[int, int, int], fonts: FontBook) -> None:
    width, height = block.right - block.left, block.bottom - block.top
    path = fonts.path_for(text)
    engine = ImageFont.Layout.RAQM if features.check("raqm") else ImageFont.Layout.BASIC
    size = max(8, int(height / max(block.lines, 1) * 0.85))
    while True:
        font = (ImageFont.truetype(str(path), size, layout_engine=engine) if path is not None
                else ImageFont.load_default(size))
        lines = _wrap(draw, text, font, width)
        box = draw.multiline_textbbox((0, 0), "\n".join(lines), font=font, spacing=2)
        if (box[3] - box[1] <= height * 1.1 and box[2] - box[0] <= width * 1.1) or size <= 8:
            break
        size = max(8, int(size * 0.85))
    if script_of(text) in ("ARABIC", "HEBREW"):  # right-to-left: from the box's right edge
        draw.multiline_text((block.right, block.top), "\n".join(lines), font=font, fill=ink,
                            spacing=2, anchor="ra", align="right")
    else:
        draw.multiline_text((block.left, block.top), "\n".join(lines), font=font, fill=ink,
                            spacing=2)


def _wrap(draw: ImageDraw.ImageDraw, text: str,
          font: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: int) -> list[str]:
    """*text* in lines no wider than *width* (words; characters where there are no spaces)."""
    parts = text.split(" ") if " " in text else list(text)
    joiner = " " if " " in text else ""
    lines: list[str] = []
    line = ""
    for part in parts:
        trial = f"{line}{joiner}{part}" if line else part
        if line and draw.textlength(trial, font=font) > width:
            lines.append(line)
            line = part
        else:
            line = trial
    return [*lines, line] if line else lines
