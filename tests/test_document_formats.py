"""Office, OpenDocument, HTML, XLIFF and EPUB files come back the same kind, layout kept.

Each test builds a file with the format's own library (python-docx, python-pptx, openpyxl,
odfpy, ebooklib, lxml), translates it through :mod:`hymt_chat.modes.documents` with an instant
stand-in for the model (the translate callback: it upper-cases the words and keeps the tags, so
only the mapping of text to units and back is judged), then walks input and output with the same
library and compares structure and formatting.
"""

import asyncio
import io
import re
import zipfile

import docx
import openpyxl
import pptx
import pytest
from ebooklib import epub
from lxml import etree
from lxml import html as lxml_html
from odf import teletype
from odf.opendocument import OpenDocumentSpreadsheet, OpenDocumentText, load
from odf.style import Style, TextProperties
from odf.table import Table, TableCell, TableRow
from odf.text import P, Span
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont

from hymt_chat.errors import IncompleteTranslationError, ModelError
from hymt_chat.modes.documents import (
    file_summary,
    load_document,
    translate_document,
    translate_document_rest,
    untranslated,
)
from tests.support.office_files import PAGE, XLIFF12, XLIFF20, docx_letter, pptx_sheet, upper


class Model:
    def __init__(self, fn=upper):
        self.calls: list[str] = []
        self.fn = fn

    async def __call__(self, text, *, on_progress=None):
        self.calls.append(text)
        return self.fn(text)


def round_trip(name, data, model=None):
    doc = load_document(name, data)
    model = model or Model()
    out = asyncio.run(translate_document(doc, model))
    return doc, doc.encode(out), model


# --- .docx ---------------------------------------------------------------------------------------


def _formatting(paragraph):
    """(text, bold, italic, underline) with neighbouring runs of the same formatting merged."""
    out: list[list] = []
    for run in paragraph.runs:
        key = (run.bold, run.italic, run.underline)
        if out and tuple(out[-1][1:]) == key:
            out[-1][0] += run.text
        else:
            out.append([run.text, *key])
    return [tuple(x) for x in out]


def test_docx_paragraphs_runs_tables_headers_and_footers_keep_their_formatting():
    source = docx_letter()
    doc, data, model = round_trip("letter.docx", source)
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(data))
    assert len(after.paragraphs) == len(before.paragraphs)
    for a, b in zip(before.paragraphs, after.paragraphs, strict=True):
        assert b.style.name == a.style.name
        assert _formatting(b) == [(t.upper(), *k) for t, *k in _formatting(a)]
    cells = [[c.text for c in row.cells] for row in after.tables[0].rows]
    assert cells == [["ITEM", "PRICE"], ["BLUE CHAIR", "259.00"]]
    assert after.sections[0].header.paragraphs[0].text == "ACME SUPPORT"
    assert after.sections[0].footer.paragraphs[0].text == "PAGE FOOTER"
    # The formatted sentence went to the model once, whole, its formatting as tags.
    assert ('Dear customer, your order is <b id="1">ready</b> and ships<x id="2"/>tomorrow '
            '<b id="3">by courier</b>.') in model.calls
    assert "259.00" not in model.calls  # no letters: nothing to translate


def test_docx_footnotes_are_translated_in_their_own_part():
    """python-docx writes no footnotes: the part is added as ECMA-376 §17.11 defines it
    (``word/footnotes.xml``, ``w:footnote`` holding ``w:p``), and read back with lxml."""
    buf = io.BytesIO()
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    notes = (f'<w:footnotes xmlns:w="{w}"><w:footnote w:id="1"><w:p><w:r><w:t>See the terms'
             '</w:t></w:r></w:p></w:footnote></w:footnotes>').encode()
    with zipfile.ZipFile(io.BytesIO(docx_letter())) as src, zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        out.writestr("word/footnotes.xml", notes)
    _, data, _ = round_trip("notes.docx", buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        tree = etree.fromstring(z.read("word/footnotes.xml"))
    assert "".join(tree.itertext()) == "SEE THE TERMS"


def test_a_model_that_drops_the_tags_still_gets_the_formatting_right():
    """The tags are protected spans: an answer without them is translated around them."""
    model = Model(lambda text: re.sub(r"<[^<>]*>", "", upper(text)))
    source = docx_letter()
    _, data, _ = round_trip("letter.docx", source, model)
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(data))
    assert _formatting(after.paragraphs[1]) == [(t.upper(), *k)
                                                for t, *k in _formatting(before.paragraphs[1])]


def test_a_failed_part_leaves_a_partial_docx_and_retry_sends_only_it():
    source = docx_letter()
    doc = load_document("letter.docx", source)

    async def flaky(text, *, on_progress=None):
        if "Blue chair" in text:
            raise ModelError("the model timed out")
        return upper(text)

    with pytest.raises(IncompleteTranslationError) as caught:
        asyncio.run(translate_document(doc, flaky))
    partial = caught.value.partial
    half = docx.Document(io.BytesIO(doc.encode(partial.text)))
    assert half.tables[0].cell(1, 0).text.endswith("Blue chair")  # marked, in place
    assert half.tables[0].cell(1, 0).text != "Blue chair"
    assert half.tables[0].cell(0, 0).text == "ITEM"
    model = Model()
    done = asyncio.run(translate_document_rest(partial, model))
    assert model.calls == ["Blue chair"]
    assert docx.Document(io.BytesIO(doc.encode(done))).tables[0].cell(1, 0).text == "BLUE CHAIR"


def test_a_file_already_in_the_target_language_comes_back_as_it_was():
    source = docx_letter()
    doc = load_document("letter.docx", source)
    again = docx.Document(io.BytesIO(doc.encode(untranslated(doc))))
    assert [p.text for p in again.paragraphs] == [
        p.text for p in docx.Document(io.BytesIO(source)).paragraphs]


# --- .pptx ---------------------------------------------------------------------------------------


def _slide_walk(data):
    out = []
    for slide in pptx.Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            frames = [shape.text_frame] if shape.has_text_frame else []
            if shape.has_table:
                frames = [c.text_frame for row in shape.table.rows for c in row.cells]
            for frame in frames:
                for p in frame.paragraphs:
                    out.append([(r.text, r.font.bold, r.font.size) for r in p.runs])
        out.append(slide.notes_slide.notes_text_frame.text)
    return out


def test_pptx_slides_tables_and_notes_keep_their_runs():
    source = pptx_sheet()
    _, data, _ = round_trip("sheet.pptx", source)
    before, after = _slide_walk(source), _slide_walk(data)

    def up(item):
        return item.upper() if isinstance(item, str) else [(t.upper(), *k) for t, *k in item]

    assert after == [up(x) for x in before]
    assert "MENTION THE WARRANTY" in after and [("2 KG", None, None)] in after


# --- .xlsx ---------------------------------------------------------------------------------------


def test_xlsx_translates_text_cells_never_numbers_dates_or_formulas():
    import datetime

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Prices"
    ws["A1"] = "Blue chair"
    ws["B1"] = 259
    ws["C1"] = datetime.date(2026, 3, 12)
    ws["D1"] = "=B1*2"
    ws["A2"] = CellRichText(["Only ", TextBlock(InlineFont(b=True), "today")])
    ws["B2"] = "12345"
    buf = io.BytesIO()
    wb.save(buf)
    doc, data, model = round_trip("prices.xlsx", buf.getvalue())
    out = openpyxl.load_workbook(io.BytesIO(data), rich_text=True)["Prices"]
    assert out["A1"].value == "BLUE CHAIR"
    assert out["B1"].value == 259
    assert out["C1"].value.date() == datetime.date(2026, 3, 12)
    assert out["D1"].value == "=B1*2"
    assert out["B2"].value == "12345"
    rich = out["A2"].value
    assert str(rich) == "ONLY TODAY"
    assert [(b.text, b.font.b) for b in rich if isinstance(b, TextBlock)] == [("TODAY", True)]
    assert "formulas, numbers and dates" in str(file_summary(doc))


def test_xlsx_with_a_million_empty_cells_reads_only_the_strings():
    """A sheet of 1,000,000 styled empty cells (``<c s="0"/>``, ECMA-376 §18.3.1.4: ``r`` is
    optional) beside an inline string (openpyxl writes ``t="inlineStr"``): only the ``<is>``
    element is parsed and replaced, every other byte of the sheet comes back as it was."""
    wb = openpyxl.Workbook()
    wb.active["A1"] = "Hello world"
    buf = io.BytesIO()
    wb.save(buf)
    big = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, \
            zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            raw = src.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                cells = '<c s="0"/>' * 1_000_000
                raw = raw.replace(b"</sheetData>", b"<row r=\"2\">" + cells.encode()
                                  + b"</row></sheetData>")
                sheet = raw
            out.writestr(info, raw)
    doc, data, model = round_trip("empty.xlsx", big.getvalue())
    assert model.calls == ["Hello world"]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        out = z.read("xl/worksheets/sheet1.xml")
    strings = re.compile(rb"<is\b.*?</is>")
    assert strings.sub(b"", out) == strings.sub(b"", sheet)
    assert openpyxl.load_workbook(io.BytesIO(data), read_only=True).active["A1"].value == \
        "HELLO WORLD"


# --- .html ---------------------------------------------------------------------------------------

def test_html_blocks_inline_tags_attributes_and_translate_no():
    doc, data, model = round_trip("hours.html", PAGE)
    before, after = lxml_html.fromstring(PAGE), lxml_html.fromstring(data)
    assert [(e.tag, {k: v for k, v in e.attrib.items() if k not in ("alt", "content")})
            for e in before.iter()] == [
        (e.tag, {k: v for k, v in e.attrib.items() if k not in ("alt", "content")})
        for e in after.iter()]
    p = after.xpath("//p")[0]
    assert p.text_content() == "WE ARE OPEN EVERY DAY FROM OUR SHOP IN TOWN."
    assert p.find("b").text == "EVERY DAY" and p.find("a").get("href") == "/map"
    assert after.xpath("//p[@translate='no']")[0].text == "Acme GmbH"
    assert after.xpath("//p[@class='notranslate']")[0].text == "ACME-42"
    assert after.xpath("//pre")[0].text == "keep this code"
    assert 'var greeting = "hello";' in after.xpath("//script")[0].text
    assert after.xpath("//img")[0].get("alt") == "A SMALL MAP"
    assert after.xpath("//title")[0].text == "OPENING HOURS"
    assert after.xpath("//meta[@name='description']")[0].get("content") == "WHEN WE ARE OPEN"
    assert str(file_summary(doc)).endswith('kept as they were: code and scripts, 2 elements '
                                           'marked translate="no"')
    assert ('We are open <b id="1">every day</b> from <b id="2">our shop</b> in town.'
            in model.calls)


# --- XLIFF ---------------------------------------------------------------------------------------

def test_xliff_12_targets_are_filled_with_state_translated_and_inline_codes_kept():
    """XLIFF 1.2 §2.4.1 translate="no" units are left alone; §4.2.3 state "translated"."""
    _, data, _ = round_trip("app.xlf", XLIFF12)
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    root = etree.fromstring(data)
    t1 = root.find(".//x:trans-unit[@id='1']/x:target", ns)
    assert t1.get("state") == "translated"
    assert "".join(t1.itertext()) == "SAVE ALL FILES NOW"
    assert [(etree.QName(e).localname, e.get("id")) for e in t1.iter() if e is not t1] == [
        ("g", "b1"), ("x", "br")]
    assert root.find(".//x:trans-unit[@id='2']/x:target", ns) is None
    t3 = root.findall(".//x:trans-unit[@id='3']/x:target", ns)
    assert len(t3) == 1 and t3[0].text == "CANCEL" and t3[0].get("state") == "translated"
    source = root.find(".//x:trans-unit[@id='1']/x:source", ns)
    assert "".join(source.itertext()) == "Save all files now"  # the source is untouched


def test_xliff_20_segments_get_targets_and_state():
    """XLIFF 2.0 §4.3.1.43 segment state "translated"; ``<ignorable>`` and translate="no"
    (§4.3.1.49) left alone."""
    _, data, _ = round_trip("app.xliff", XLIFF20)
    ns = {"x": "urn:oasis:names:tc:xliff:document:2.0"}
    root = etree.fromstring(data)
    segments = root.findall(".//x:unit[@id='u1']/x:segment", ns)
    assert [s.get("state") for s in segments] == ["translated", "translated"]
    first = segments[0].find("x:target", ns)
    assert "".join(first.itertext()) == "CLICK HERE TO START"
    assert [etree.QName(e).localname for e in first.iter() if e is not first] == ["pc", "ph"]
    assert segments[1].find("x:target", ns).text == "THEN WAIT."
    assert root.find(".//x:unit[@id='u2']//x:target", ns) is None
    assert root.find(".//x:ignorable/x:target", ns) is None


# --- OpenDocument --------------------------------------------------------------------------------


def test_odt_paragraphs_and_styled_spans():
    text = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    text.automaticstyles.addElement(bold)
    p = P(text="Your parcel is ")
    p.addElement(Span(stylename=bold, text="on its way"))
    p.addText(" today.")
    text.text.addElement(p)
    text.text.addElement(P(text="Kind regards"))
    buf = io.BytesIO()
    text.write(buf)
    _, data, model = round_trip("letter.odt", buf.getvalue())
    out = load(io.BytesIO(data))
    paras = out.getElementsByType(P)
    assert [teletype.extractText(x) for x in paras] == ["YOUR PARCEL IS ON ITS WAY TODAY.",
                                                        "KIND REGARDS"]
    spans = paras[0].getElementsByType(Span)
    assert [(teletype.extractText(s), s.getAttribute("stylename")) for s in spans] == [
        ("ON ITS WAY", "Bold")]
    assert 'Your parcel is <b id="1">on its way</b> today.' in model.calls


def test_ods_string_cells_only():
    sheet = OpenDocumentSpreadsheet()
    table = Table(name="Prices")
    row = TableRow()
    for kind, value, shown in (("string", None, "Blue chair"), ("float", "259", "259"),
                               ("date", "2026-03-12", "12 March 2026")):
        cell = TableCell(valuetype=kind, value=value) if value else TableCell(valuetype=kind)
        if kind == "date":
            cell = TableCell(valuetype="date", datevalue=value)
        cell.addElement(P(text=shown))
        row.addElement(cell)
    table.addElement(row)
    sheet.spreadsheet.addElement(table)
    buf = io.BytesIO()
    sheet.write(buf)
    doc, data, _ = round_trip("prices.ods", buf.getvalue())
    out = load(io.BytesIO(data))
    assert [teletype.extractText(x) for x in out.getElementsByType(P)] == [
        "BLUE CHAIR", "259", "12 March 2026"]
    assert "numbers, dates and formulas" in str(file_summary(doc))


# --- EPUB ----------------------------------------------------------------------------------------


def test_epub_chapters_are_translated_and_the_book_still_opens(tmp_path):
    book = epub.EpubBook()
    book.set_identifier("id1")
    book.set_title("A tale")
    book.set_language("en")
    chapter = epub.EpubHtml(title="One", file_name="one.xhtml", lang="en")
    chapter.content = "<h1>Chapter one</h1><p>It was a <em>dark</em> night.</p>"
    book.add_item(chapter)
    book.toc = [chapter]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", chapter]
    path = tmp_path / "tale.epub"
    epub.write_epub(str(path), book)
    _, data, _ = round_trip("tale.epub", path.read_bytes())
    out_path = tmp_path / "out.epub"
    out_path.write_bytes(data)
    again = epub.read_epub(str(out_path))
    content = again.get_item_with_href("one.xhtml").get_content()
    page = etree.fromstring(content)
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    assert page.find(".//h:h1", ns).text == "CHAPTER ONE"
    p = page.find(".//h:p", ns)
    assert "".join(p.itertext()) == "IT WAS A DARK NIGHT." and p.find("h:em", ns).text == "DARK"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        first = z.infolist()[0]
        assert (first.filename, first.compress_type) == ("mimetype", zipfile.ZIP_STORED)


def test_html_keeps_its_own_encoding_and_gains_no_doctype():
    """A page says its encoding in ``<meta charset>`` (HTML §4.2.5.4): it is written back in
    that encoding, and a page without a doctype is not given one (lxml's parser would add
    HTML 4.0's, which switches browsers to quirks mode)."""
    page = ('<html><head><meta charset="iso-8859-1"><title>Café</title></head>'
            "<body><p>Un café &amp; un thé</p></body></html>").encode("latin-1")
    _, data, _ = round_trip("menu.html", page)
    assert data.startswith(b"<html>")
    assert "<p>UN CAFÉ &amp; UN THÉ</p>" in data.decode("latin-1")


def test_xhtml_named_entities_are_read_without_loading_the_dtd():
    """EPUB 2 chapters are XHTML 1.1, whose ``&nbsp;`` the DTD defines; the DTD is never
    loaded, the entity is read as the character HTML names (U+00A0)."""
    from hymt_chat.text.formats.webpage import read_xhtml

    page = (b'<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
            b'"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd"><html xmlns="http://www.w3.org/'
            b'1999/xhtml"><body><p>Hello&nbsp;world &amp; more</p></body></html>')
    _, units, _ = read_xhtml(page, "'c.xhtml'")
    assert [u.tagged for u in units] == ["Hello\xa0world &amp; more"]


def test_pptx_chart_titles_are_translated_and_chart_data_kept():
    """A chart's title is DrawingML text in ``ppt/charts/chartN.xml`` (ECMA-376 §21.2.2.210
    ``c:title``); its series and categories are data, left alone."""
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE

    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Sales"
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Units", (19.2, 21.4))
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, 4000000, 3000000,
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Units per region"
    buf = io.BytesIO()
    prs.save(buf)
    _, out, _ = round_trip("sales.pptx", buf.getvalue())
    after = pptx.Presentation(io.BytesIO(out)).slides[0]
    chart = next(s for s in after.shapes if s.has_chart).chart
    assert chart.chart_title.text_frame.text == "UNITS PER REGION"
    assert list(chart.plots[0].categories) == ["North", "South"]
    assert list(chart.plots[0].series[0].values) == [19.2, 21.4]


def test_docx_hyperlinks_keep_their_target_and_their_words():
    """A ``w:hyperlink`` (ECMA-376 §17.16.22) holds runs: it goes as one paired tag, its
    relationship id kept."""
    from docx.oxml import parse_xml

    d = docx.Document()
    p = d.add_paragraph("Read our ")
    rid = d.part.relate_to("https://example.com/terms", docx.opc.constants.RELATIONSHIP_TYPE
                           .HYPERLINK, is_external=True)
    p._p.append(parse_xml(
        f'<w:hyperlink xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        f'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
        f'r:id="{rid}"><w:r><w:rPr><w:u w:val="single"/></w:rPr><w:t>terms of sale</w:t>'
        f"</w:r></w:hyperlink>"))
    p.add_run(" before paying.")
    buf = io.BytesIO()
    d.save(buf)
    _, data, model = round_trip("terms.docx", buf.getvalue())
    assert 'Read our <b id="1">terms of sale</b> before paying.' in model.calls
    out = docx.Document(io.BytesIO(data)).paragraphs[0]
    [link] = out.hyperlinks
    assert (link.text, link.address) == ("TERMS OF SALE", "https://example.com/terms")
    assert link.runs[0].underline is True
    assert out.text == "READ OUR TERMS OF SALE BEFORE PAYING."


def test_odp_slides_and_their_notes():
    """An ODF presentation's text is ``text:p`` in ``draw:frame``/``draw:text-box`` on a
    ``draw:page``, its notes in ``presentation:notes`` (ODF 1.3 part 3 §16.17)."""
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import MasterPage, PageLayout

    deck = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    deck.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    deck.masterstyles.addElement(master)
    page = Page(masterpagename=master)
    frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
    box = TextBox()
    box.addElement(P(text="Welcome to the launch"))
    frame.addElement(box)
    page.addElement(frame)
    notes = Notes()
    note_frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
    note_box = TextBox()
    note_box.addElement(P(text="Thank the team first"))
    note_frame.addElement(note_box)
    notes.addElement(note_frame)
    page.addElement(notes)
    deck.presentation.addElement(page)
    buf = io.BytesIO()
    deck.write(buf)
    _, data, _ = round_trip("launch.odp", buf.getvalue())
    out = load(io.BytesIO(data))
    assert [teletype.extractText(x) for x in out.getElementsByType(P)] == [
        "WELCOME TO THE LAUNCH", "THANK THE TEAM FIRST"]
    assert len(out.getElementsByType(Notes)) == 1


def test_docx_content_controls_inside_a_paragraph_are_translated_in_place():
    """An inline content control (``w:sdt``, ECMA-376 §17.5.2) keeps its properties
    (``w:sdtPr``) and holds its runs in ``w:sdtContent``: one paired tag."""
    from docx.oxml import parse_xml

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    d = docx.Document()
    p = d.add_paragraph("Signed by ")
    p._p.append(parse_xml(
        f'<w:sdt xmlns:w="{w}"><w:sdtPr><w:alias w:val="Signer"/></w:sdtPr><w:sdtContent>'
        f"<w:r><w:t>the customer</w:t></w:r></w:sdtContent></w:sdt>"))
    p.add_run(" today.")
    buf = io.BytesIO()
    d.save(buf)
    _, data, model = round_trip("signed.docx", buf.getvalue())
    assert 'Signed by <b id="1">the customer</b> today.' in model.calls
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        body = etree.fromstring(z.read("word/document.xml"))
    ns = {"w": w}
    assert body.find(".//w:sdt/w:sdtPr/w:alias", ns).get(f"{{{w}}}val") == "Signer"
    assert "".join(body.find(".//w:sdt/w:sdtContent", ns).itertext()) == "THE CUSTOMER"
    assert docx.Document(io.BytesIO(data)).paragraphs[0].text.startswith("SIGNED BY")


def test_odt_footnotes_stay_in_place_and_are_translated_as_paragraphs():
    """``text:note`` (ODF 1.3 part 3 §6.3.2) sits inside a paragraph and holds paragraphs of
    its own: kept as an atom in the sentence, its own text translated apart."""
    from odf.text import Note, NoteBody, NoteCitation

    text = OpenDocumentText()
    p = P(text="Prices include tax")
    note = Note(id="ftn1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="Except in Jersey"))
    note.addElement(body)
    p.addElement(note)
    p.addText(" everywhere.")
    text.text.addElement(p)
    buf = io.BytesIO()
    text.write(buf)
    _, data, model = round_trip("prices.odt", buf.getvalue())
    assert 'Prices include tax<x id="1"/> everywhere.' in model.calls
    out = load(io.BytesIO(data))
    [note] = out.getElementsByType(Note)
    assert teletype.extractText(note.getElementsByType(NoteBody)[0]) == "EXCEPT IN JERSEY"
    outer = out.getElementsByType(P)[0]
    assert note.parentNode is outer
    assert teletype.extractText(outer).startswith("PRICES INCLUDE TAX")


def test_xliff_names_the_target_language_where_the_file_does_not():
    """1.2 ``<file target-language>`` (§2.6.1) and 2.0 ``<xliff trgLang>`` (§4.2.2.1) are set
    from the translation's target when missing, and left as they are when present."""
    bare = XLIFF12.replace(b' target-language="de"', b"")
    doc = load_document("app.xlf", bare)
    out = asyncio.run(translate_document(doc, Model()))
    root = etree.fromstring(doc.encode(out, "fr"))
    assert root[0].get("target-language") == "fr"
    doc = load_document("app.xlf", XLIFF12)
    assert etree.fromstring(doc.encode(untranslated(doc), "fr"))[0].get(
        "target-language") == "de"
    doc = load_document("app.xliff", XLIFF20.replace(b' trgLang="fr"', b""))
    assert etree.fromstring(doc.encode(untranslated(doc), "ja")).get("trgLang") == "ja"


def test_runs_split_only_by_language_or_spell_check_marks_go_as_plain_text():
    """Word splits runs on ``w:lang`` and ``w:noProof`` (ECMA-376 §17.3.2.20, §17.3.2.21),
    PowerPoint writes ``lang``/``dirty`` on every ``a:rPr``: neither is formatting anyone
    sees, so no tag is spent on them."""
    from docx.oxml import parse_xml

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    d = docx.Document()
    p = d.add_paragraph("Bonjour ")
    p._p.append(parse_xml(f'<w:r xmlns:w="{w}"><w:rPr><w:lang w:val="fr-FR"/><w:noProof/>'
                          f"</w:rPr><w:t>à tous</w:t></w:r>"))
    buf = io.BytesIO()
    d.save(buf)
    _, _, model = round_trip("hello.docx", buf.getvalue())
    assert "Bonjour à tous" in model.calls

    prs = pptx.Presentation()
    frame = prs.slides.add_slide(prs.slide_layouts[5]).shapes.title.text_frame
    para = frame.paragraphs[0]
    for text, lang in (("Hello ", "en-US"), ("everyone", "en-GB")):
        run = para.add_run()
        run.text = text
        run._r.get_or_add_rPr().set("lang", lang)
    buf = io.BytesIO()
    prs.save(buf)
    _, _, model = round_trip("hello.pptx", buf.getvalue())
    assert "Hello everyone" in model.calls
