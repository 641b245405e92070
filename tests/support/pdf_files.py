"""PDF files (and a picture bomb) for the tests, made with reportlab (as people's PDFs are made by a library) and, for
the hostile ones, written object by object (ISO 32000-1 §7.5: header, objects, xref, trailer)."""

from __future__ import annotations

import io
import struct
import zlib

import pikepdf
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import (
    Flowable,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)
from reportlab.platypus import Image as Picture

from hymt_chat.text.formats.pdf_fonts import FontBook

LINK = "https://example.org/terms"
PAGE_ONE = [
    "Rental agreement",
    "The tenant pays the rent on the first day of each month.",
    "Read the full terms on our website before you sign.",
]
TABLE = [["Item", "Price"], ["Blue chair", "259.00"], ["Oak table", "890.00"]]
PAGE_TWO = ["Both parties keep one signed copy of this agreement."]


SIGN = ["Sortie de secours", "Bitte nicht rauchen", "非常口はこちらです", "مخرج الطوارئ"]
"""A sign's lines in French, German, Japanese and Arabic."""


def sign(lines: list[str] = SIGN, size: tuple[int, int] = (900, 620)) -> Image.Image:
    """A picture of *lines*, black on white, each in the Noto (or WenQuanYi) font of its
    script at 44 px, 150 px apart."""
    picture = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(picture)
    fonts = FontBook()
    for i, line in enumerate(lines):
        font = ImageFont.truetype(str(fonts.path_for(line)), 44)
        draw.text((40, 60 + i * 150), line, font=font, fill="black")
    return picture


def png(width: int = 120, height: int = 60, colour: str = "#d04020") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buf, "PNG")
    return buf.getvalue()


def two_pages() -> bytes:
    """Two A4 pages: a heading, paragraphs, a link, a picture; then a table and a paragraph."""
    styles = getSampleStyleSheet()
    buf = io.BytesIO()
    doc = SimpleDocTemplate(buf, pagesize=A4, title="Rental agreement")
    table = Table(TABLE, colWidths=[200, 100])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    doc.build([
        Paragraph(PAGE_ONE[0], styles["Heading1"]),
        Paragraph(PAGE_ONE[1], styles["BodyText"]),
        Paragraph(f'Read the full terms on our <a href="{LINK}">website</a> before you sign.',
                  styles["BodyText"]),
        Spacer(1, 12),
        Picture(io.BytesIO(png()), width=120, height=60),
        PageBreak(),
        table,
        Spacer(1, 24),
        Paragraph(PAGE_TWO[0], styles["BodyText"]),
    ])
    return buf.getvalue()


def paragraphs(*pages: list[str]) -> bytes:
    """A4 pages of body-text paragraphs, one list per page (a letter whose words a test
    chooses: each paragraph is one block, one part of the file)."""
    styles = getSampleStyleSheet()
    buf = io.BytesIO()
    flow: list[Flowable] = []
    for number, page in enumerate(pages):
        if number:
            flow.append(PageBreak())
        flow.extend(Paragraph(text, styles["BodyText"]) for text in page)
    SimpleDocTemplate(buf, pagesize=A4).build(flow)
    return buf.getvalue()


def raw_pdf(*objects: bytes, root: int = 1) -> bytes:
    """A PDF of *objects* (object i+1 is ``objects[i]``), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, root, start)
    return bytes(out)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def pixel_bomb(side: int = 40_000) -> bytes:
    """A PNG whose header (IHDR, PNG spec §11.2.2) declares side x side RGB pixels; its data is
    a few bytes, as a real bomb's would be before the first row."""
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(b"\x00" * 1024)) + _chunk(b"IEND", b""))


def _stream(body: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(body), extra) + body + b"\nendstream"


TEXT = b"BT /F1 12 Tf 72 720 Td (Hello world, this is a page.) Tj ET"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def one_page(page_extra: bytes = b"", contents: bytes = TEXT, *more: bytes,
             media: bytes = b"[0 0 612 792]", count: int = 1) -> bytes:
    """Catalog 1, Pages 2, Page 3, contents 4, font 5, then *more* (objects 6…)."""
    return raw_pdf(
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox " + media
        + b" /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R " + page_extra + b">>",
        _stream(contents), FONT, *more)


def unmapped_font() -> bytes:
    """Two pages: Helvetica text, then text in a CID font with no ToUnicode map (ISO 32000-1
    §9.10.2: its characters cannot be told; pdfminer reads them as ``(cid:65)``)."""
    cid = (b"<< /Type /Font /Subtype /Type0 /BaseFont /Foo /Encoding /Identity-H "
           b"/DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Foo "
           b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>] >>")
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            b"/F1 %d 0 R >> >> /Contents %d 0 R >>")
    return raw_pdf(
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        page % (7, 5), page % (8, 6), _stream(TEXT),
        _stream(b"BT /F1 12 Tf 72 720 Td <0041004200430044> Tj ET"), FONT, cid)


def deep_nest(depth: int = 100_000) -> bytes:
    return one_page(b"/Nest 6 0 R", TEXT, b"[" * depth + b"]" * depth)


def many_pages_declared(count: int = 100_000) -> bytes:
    return one_page(count=count)


def huge_page() -> bytes:
    return one_page(media=b"[0 0 720000 720000]")  # 10,000 x 10,000 inches


def image_bomb(codec: str) -> bytes:
    """An image XObject that declares 100,000 x 100,000 pixels in *codec* (JBIG2Decode or
    JPXDecode)."""
    image = _stream(b"\x00" * 64, b"/Type /XObject /Subtype /Image /Width 100000 /Height 100000 "
                    b"/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /" + codec.encode())
    return one_page(b"/Res 6 0 R", TEXT + b" q 100 0 0 100 0 0 cm /Im1 Do Q", image)


def no_page_tree() -> bytes:
    """A catalog whose page tree is missing (a file cut short)."""
    return raw_pdf(b"<< /Type /Catalog /Pages 9 0 R >>")


def flate_bomb(megabytes: int = 80) -> bytes:
    """A content stream inflating to *megabytes* MB, compressed a megabyte at a time (so that
    making it costs no memory of its own)."""
    deflate, zeros = zlib.compressobj(9), b"0" * 1_048_576
    body = b"".join(deflate.compress(zeros) for _ in range(megabytes)) + deflate.flush()
    return one_page(b"", TEXT, _stream(body, b"/Filter /FlateDecode"))


def encrypted(user: str) -> bytes:
    """two_pages() protected: with a user password, or only an owner's (*user* empty)."""
    buf = io.BytesIO()
    with pikepdf.open(io.BytesIO(two_pages())) as pdf:
        pdf.save(buf, encryption=pikepdf.Encryption(owner="owner", user=user))
    return buf.getvalue()


def active() -> bytes:
    """two_pages() with an opening JavaScript action, a JavaScript name tree, an embedded file
    and a form field."""
    buf = io.BytesIO()
    with pikepdf.open(io.BytesIO(two_pages())) as pdf:
        js = pdf.make_indirect(pikepdf.Dictionary(S=pikepdf.Name.JavaScript,
                                                  JS=pikepdf.String("app.alert('hi')")))
        pdf.Root.OpenAction = js
        attached = pikepdf.AttachedFileSpec(pdf, b"secret", filename="payload.txt")
        pdf.attachments["payload.txt"] = attached
        names = pdf.Root.Names
        names.JavaScript = pikepdf.Dictionary(Names=pikepdf.Array([pikepdf.String("a"), js]))
        field = pdf.make_indirect(pikepdf.Dictionary(
            Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Widget, FT=pikepdf.Name.Tx,
            T=pikepdf.String("name"), V=pikepdf.String("Ada"),
            Rect=pikepdf.Array([72, 100, 272, 120]), P=pdf.pages[1].obj))
        pdf.pages[1].obj.Annots = pdf.make_indirect(pikepdf.Array([field]))
        pdf.Root.AcroForm = pikepdf.Dictionary(Fields=pikepdf.Array([field]))
        pdf.save(buf)
    return buf.getvalue()
