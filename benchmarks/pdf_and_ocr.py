"""What a PDF and a picture cost on this host: the PDF libraries compared, OCR per page.

    .venv/bin/python benchmarks/pdf_and_ocr.py   # writes docs/results/pdf-and-ocr.json
    .venv/bin/python benchmarks/pdf_and_ocr.py --pictures   # and docs/screenshots/pdf-*.png

* **text blocks**: the two-page test PDF (tests/support/pdf_files.py) read for its text by
  pdfminer.six (layout analysis: boxes of paragraphs and cells, what the app uses) and by
  pypdfium2 (PDFium's text page: characters and their boxes, no paragraphs), median of 20;
* **round trip**: the same PDF read, translated by an instant stand-in and written back
  (pikepdf strips the text, reportlab draws the translation, the overlay is merged), median of 5;
* **OCR**: an A4 page of text (40 lines of 11 pt Latin text, Pillow in a Noto font, at 200 dpi,
  as :data:`hymt_chat.text.formats.pdf_scan.SCAN_DPI` renders a scan) read by Tesseract with the
  Latin language data installed: seconds per page and characters found against characters
  written.
"""

from __future__ import annotations

import asyncio
import io
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image, ImageDraw, ImageFont

from hymt_chat.modes.documents import load_document, translate_document
from hymt_chat.text.formats.ocr import Tesseract
from hymt_chat.text.formats.pdf_fonts import FontBook
from hymt_chat.text.formats.picture import find_text
from tests.support import pdf_files

SENTENCE = "The tenant pays the rent on the first day of each month, by bank transfer."


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4)


def text_blocks(data: bytes) -> dict[str, float]:
    import pypdfium2 as pdfium
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams

    def miner() -> None:
        for _ in extract_pages(io.BytesIO(data), laparams=LAParams(all_texts=True)):
            pass

    def pdfium_chars() -> None:
        pdf = pdfium.PdfDocument(data)
        for page in pdf:
            text = page.get_textpage()
            for i in range(text.count_rects()):
                text.get_rect(i)
        pdf.close()

    return {"pdfminer_s_per_file": _median(miner, 20),
            "pypdfium2_s_per_file": _median(pdfium_chars, 20)}


def round_trip(data: bytes) -> float:
    async def model(text: str, *, on_progress: object = None) -> str:
        return text.upper()

    def once() -> None:
        doc = load_document("agreement.pdf", data)
        doc.encode(asyncio.run(translate_document(doc, model)))

    return _median(once, 5)


def ocr_page() -> dict[str, float | int]:
    page = Image.new("RGB", (1654, 2339), "white")  # A4 at 200 dpi
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(str(FontBook().path_for(SENTENCE)), 31)  # 11 pt at 200 dpi
    for line in range(40):
        draw.text((120, 120 + line * 52), SENTENCE, font=font, fill="black")
    written = len(SENTENCE) * 40
    tesseract = Tesseract.find()
    assert tesseract is not None, "Tesseract is not installed: bash scripts/setup.sh"
    start = time.perf_counter()
    blocks = find_text(page, "'page'", tesseract)
    seconds = time.perf_counter() - start
    found = sum(len(b.text) for b in blocks)
    exact = sum(b.text.count(SENTENCE) for b in blocks)
    return {"ocr_s_per_page": round(seconds, 2), "characters_written": written,
            "characters_found": found, "lines_read_exactly": exact, "lines_written": 40,
            "languages": "+".join(tesseract.choose("Latin"))}


GERMAN = {
    "Rental agreement": "Mietvertrag",
    "The tenant pays the rent on the first day of each month.":
        "Der Mieter zahlt die Miete am ersten Tag jedes Monats.",
    "Read the full terms on our website before you sign.":
        "Lesen Sie die vollständigen Bedingungen auf unserer Website, bevor Sie unterschreiben.",
    "Item": "Artikel", "Price": "Preis", "Blue chair": "Blauer Stuhl", "Oak table": "Eichentisch",
    "Both parties keep one signed copy of this agreement.":
        "Beide Parteien behalten eine unterschriebene Ausfertigung dieses Vertrags.",
}


def pictures() -> None:
    """The test PDF's first page before and after a translation into German (a fixed one: the
    layout is what is shown), as the docs show them."""
    import pypdfium2 as pdfium

    async def model(text: str, *, on_progress: object = None) -> str:
        return GERMAN.get(text, text)

    source = pdf_files.two_pages()
    doc = load_document("agreement.pdf", source)
    after = doc.encode(asyncio.run(translate_document(doc, model)))
    for name, data in (("before", source), ("after", after)):
        pdf = pdfium.PdfDocument(data)
        page = pdf[0].render(scale=1.2).to_pil()
        page.crop((0, 0, page.width, page.height // 2)).save(
            ROOT / "docs" / "screenshots" / f"pdf-{name}.png", optimize=True)
        pdf.close()


def main() -> None:
    if "--pictures" in sys.argv:
        pictures()
    data = pdf_files.two_pages()
    result = {**text_blocks(data), "round_trip_s": round_trip(data), **ocr_page()}
    out = ROOT / "docs" / "results" / "pdf-and-ocr.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
