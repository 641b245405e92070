"""Pictures: refused from the header when they are bombs, refused when damaged; Tesseract's TSV
read into paragraphs in its order; the translation laid over the boxes.

The TSV is Tesseract 5's (``tesseract img stdout tsv``: the columns of its ``TessTsvRenderer``,
``level page_num block_num par_num line_num word_num left top width height conf text``; level 5
is a word). Tesseract itself runs in tests/test_ocr.py.
"""

import io

import pytest
from PIL import Image, ImageDraw

from hymt_chat.errors import InputError
from hymt_chat.modes.documents import load_document
from hymt_chat.text.formats.ocr import TESSERACT_CODES, OcrBlock, Tesseract, parse_tsv
from hymt_chat.text.formats.pdf_fonts import FontBook
from hymt_chat.text.formats.picture import find_text, open_picture, overlay
from tests.support.pdf_files import pixel_bomb


def _png(size=(400, 200), colour="white") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    return buf.getvalue()


def test_a_pixel_bomb_is_refused_from_its_header_before_any_decoding():
    with pytest.raises(InputError, match=r"declares 1,600 million pixels.*before decoding"):
        open_picture(pixel_bomb(), "'bomb.png'")
    with pytest.raises(InputError, match="pixel bomb"):
        load_document("bomb.png", pixel_bomb())


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n truncated", b"GIF89a not ours",
                                  _png()[:200]])
def test_a_damaged_or_foreign_picture_is_refused_in_one_sentence(data):
    with pytest.raises(InputError, match="damaged") as caught:
        load_document("photo.png", data)
    assert str(caught.value).count(". ") == 0


ROWS = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
    "1\t1\t0\t0\t0\t0\t0\t0\t800\t400\t-1\t",
    "4\t1\t1\t1\t1\t0\t20\t20\t300\t30\t-1\t",
    "5\t1\t1\t1\t1\t1\t20\t20\t120\t30\t96.1\tSortie",
    "5\t1\t1\t1\t1\t2\t150\t20\t170\t30\t95.0\tde secours",
    "5\t1\t1\t1\t2\t1\t20\t60\t200\t30\t93.0\tfermée",
    "5\t1\t2\t1\t1\t1\t20\t200\t60\t40\t91.0\t非常",
    "5\t1\t2\t1\t1\t2\t80\t200\t60\t40\t90.0\t口",
    "5\t1\t3\t1\t1\t1\t500\t300\t20\t20\t12.0\t~",
)
TSV = "\n".join(ROWS)


def test_tesseract_tsv_is_read_as_paragraphs_in_its_order():
    blocks = parse_tsv(TSV)
    assert blocks == [
        OcrBlock(20, 20, 320, 90, "Sortie de secours fermée", 2),
        OcrBlock(20, 200, 140, 240, "非常口", 1),  # no space between CJK characters
    ]  # the low-confidence "~" is noise, left out


def test_the_language_data_follows_the_script_and_a_named_source():
    tess = Tesseract("tesseract", ["ara", "deu", "eng", "fra", "jpn", "osd"])
    assert tess.choose("Latin") == ["eng", "fra", "deu", "ara", "jpn"]  # the others' one each
    assert tess.choose("Arabic") == ["ara", "eng", "jpn"]
    assert tess.choose("Japanese") == ["jpn", "eng", "ara"]
    assert tess.choose(None, "de") == ["deu"]
    assert tess.choose(None) == ["ara", "deu", "eng", "fra", "jpn"]
    every = Tesseract("tesseract", sorted({*TESSERACT_CODES.values(), "osd"}))
    assert every.choose("Latin") == ["eng", "fra", "deu", "rus", "ara", "heb"]  # at most six


def test_the_translation_is_laid_over_the_boxes_on_the_surrounding_colour():
    picture = Image.new("RGB", (400, 200), (250, 240, 200))
    ImageDraw.Draw(picture).text((22, 22), "Sortie de secours", fill=(0, 0, 0))
    block = OcrBlock(20, 20, 200, 50, "Sortie de secours")
    drawn = overlay(picture, [block], ["EMERGENCY EXIT"], FontBook())
    assert drawn.size == picture.size
    inside = drawn.crop((18, 18, 202, 52))
    colours = {colour for _, colour in inside.getcolors(maxcolors=100_000)}
    assert (250, 240, 200) in colours and (0, 0, 0) in colours  # paper kept, new ink
    assert drawn.crop((20, 20, 200, 50)).tobytes() != picture.crop((20, 20, 200, 50)).tobytes()
    assert drawn.crop((250, 100, 400, 200)).tobytes() == picture.crop((250, 100, 400, 200)).tobytes()


def test_right_to_left_text_is_drawn_too():
    picture = Image.new("RGB", (400, 100), "white")
    block = OcrBlock(10, 10, 390, 60, "Exit")
    drawn = overlay(picture, [block], ["مخرج الطوارئ"], FontBook())
    assert drawn.crop((10, 10, 390, 60)).getcolors(maxcolors=100_000) != [(380 * 50, (255,) * 3)]


class _Greek(Tesseract):
    """Tesseract's script detection answering Greek (what ``--psm 0`` prints for a Greek sign)."""

    def script(self, png: bytes) -> str | None:
        return "Greek"

    def read(self, png: bytes, langs: list[str]) -> list[OcrBlock]:
        raise AssertionError("no OCR for a script that no served language is written in")


def test_text_in_a_script_no_served_language_uses_is_refused_naming_it():
    with pytest.raises(InputError, match="Greek script, which none of the languages"):
        find_text(Image.new("RGB", (100, 50), "white"), "'sign.png'", _Greek("tesseract", ["eng"]))
