"""PDFs that must not be trusted: each refused in one sentence, in under 2 s and 100 MB (and a
picture's pixel bomb measured the same way).

The hostile files are written object by object (tests/support/pdf_files.py); what each tests:
ISO 32000-1 Annex C.2 (a page is at most 14,400 units a side), §7.7.3.2 (a page tree's
``/Count``), §8.9.5 (an image's ``/Width`` and ``/Height``, which JBIG2 and JPX streams declare
too), §7.6 (encryption: a user password, or only an owner's with restricted permissions),
§7.4.4 (Flate streams). qpdf stops at 500 levels of nesting and says so; that warning refuses.
The time and memory are measured in a child process: each refusal's peak resident size (Linux's
VmHWM, reset through ``/proc/self/clear_refs`` just before) less its size before.
"""

import io
import json
import subprocess
import sys

import pytest
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from hymt_chat.errors import InputError
from hymt_chat.modes.documents import load_document
from hymt_chat.text.formats.pdf_scan import MAX_SCANNED_PAGES
from tests.conftest import ROOT
from tests.support import pdf_files

BOMBS = {
    "deep nesting": ("deep_nest", (), "nests its objects"),
    "100,000 pages": ("many_pages_declared", (), "100,000 pages"),
    "a 10,000-inch page": ("huge_page", (), "200 inches"),
    "a JBIG2 bomb": ("image_bomb", ("JBIG2Decode",), "10,000 million pixels"),
    "a JPX bomb": ("image_bomb", ("JPXDecode",), "10,000 million pixels"),
    "a Flate bomb": ("flate_bomb", (), "decompression bomb"),
    "a user password": ("encrypted", ("user",), "password"),
    "an owner password": ("encrypted", ("",), "encrypted"),
    "a corrupt file": ("no_page_tree", (), "damaged"),
}
MEASURED = {**BOMBS, "a pixel bomb": ("pixel_bomb", (), "pixel bomb")}  # tests/test_pictures.py


def _refused(data: bytes, *words: str) -> str:
    with pytest.raises(InputError) as caught:
        load_document("bad.pdf", data)
    message = str(caught.value)
    assert all(word in message for word in words), message
    assert message.count(". ") <= 1 and message.endswith("."), message  # one sentence
    return message


@pytest.mark.parametrize("what", list(BOMBS))
def test_each_hostile_pdf_is_refused_in_one_sentence(what):
    maker, args, words = BOMBS[what]
    _refused(getattr(pdf_files, maker)(*args), words)


def test_not_a_pdf_and_a_damaged_pdf_say_so():
    _refused(b"GIF89a, not a PDF at all", "not a PDF")
    _refused(b"%PDF-1.7\n" + bytes(range(256)) * 20, "damaged")


def test_a_scan_without_a_text_layer_is_named_as_such():
    _refused(pdf_files.one_page(contents=b"q 10 0 0 10 0 0 cm Q"), "no text layer")


_MEASURE = """
import json, sys, time
from hymt_chat.errors import InputError
from hymt_chat.modes.documents import load_document
from tests.support import pdf_files

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024

load_document("warm.pdf", pdf_files.two_pages())  # the modules and fonts loaded
out = {}
for what, (maker, args) in json.loads(sys.argv[1]).items():
    data = getattr(pdf_files, maker)(*args)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from the present size
    base = status("VmRSS:")
    start = time.perf_counter()
    try:
        load_document("bomb.png" if maker == "pixel_bomb" else "bomb.pdf", data)
        out[what] = None
    except InputError:
        out[what] = [time.perf_counter() - start, status("VmHWM:") - base]
print(json.dumps(out))
"""


def test_each_refusal_takes_under_2_seconds_and_100_mb():
    todo = {what: (maker, args) for what, (maker, args, _) in MEASURED.items()}
    run = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(todo)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    for what, got in figures.items():
        assert got is not None, f"{what} was not refused"
        seconds, megabytes = got
        assert seconds < 2.0 and megabytes < 100, (what, seconds, megabytes)


def test_a_scan_of_more_pages_than_ocr_reads_at_once_is_refused_before_any_ocr():
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=(200, 200))
    picture = ImageReader(io.BytesIO(pdf_files.png()))
    for _ in range(MAX_SCANNED_PAGES + 1):
        canvas.drawImage(picture, 10, 10, 120, 60)
        canvas.showPage()
    canvas.save()
    _refused(buf.getvalue(), f"{MAX_SCANNED_PAGES + 1} scanned pages", "split it")
