"""Small documents of each kind, built with the format's own library, and the stand-in
'translation' the document tests judge the mapping with (words upper-cased, tags kept)."""

import io
import re

import docx
import pptx

_WORDS = re.compile(r"(<[^<>]*>|&\w+;)|([^<&]+)")


def upper(text: str) -> str:
    """The stand-in 'translation': words upper-cased, tags and entities as they came."""
    return _WORDS.sub(lambda m: m.group(1) or m.group(2).upper(), text)


def docx_letter() -> bytes:
    d = docx.Document()
    d.add_heading("Quarterly letter", level=1)
    p = d.add_paragraph("Dear customer, your order is ")
    r = p.add_run("ready")
    r.bold = True
    p.add_run(" and ships\ttomorrow ")
    r = p.add_run("by courier")
    r.italic = True
    r.underline = True
    p.add_run(".")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Item"
    table.cell(0, 1).text = "Price"
    table.cell(1, 0).text = "Blue chair"
    table.cell(1, 1).text = "259.00"
    d.sections[0].header.paragraphs[0].text = "Acme support"
    d.sections[0].footer.paragraphs[0].text = "Page footer"
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def docx_paragraphs(paragraphs: list[str]) -> bytes:
    """A .docx of plain paragraphs, one each (a letter whose words a test chooses)."""
    d = docx.Document()
    for text in paragraphs:
        d.add_paragraph(text)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def pptx_sheet() -> bytes:
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Product sheet"
    body = slide.placeholders[1].text_frame
    body.text = "Light and strong"
    para = body.add_paragraph()
    run = para.add_run()
    run.text = "Made of "
    run = para.add_run()
    run.text = "recycled aluminium"
    run.font.bold = True
    rows = slide.shapes.add_table(2, 2, 0, 0, 3000000, 1000000).table
    rows.cell(0, 0).text = "Weight"
    rows.cell(0, 1).text = "2 kg"
    rows.cell(1, 0).text = "Colour"
    rows.cell(1, 1).text = "42"
    slide.notes_slide.notes_text_frame.text = "Mention the warranty"
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


PAGE = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Opening hours</title>
<meta name="description" content="When we are open"><style>p { color: red }</style></head>
<body><h1>Opening hours</h1>
<p>We are open <b>every day</b> from <a href="/map" class="x">our shop</a> in town.</p>
<p translate="no">Acme GmbH</p><p class="notranslate">ACME-42</p>
<ul><li>Monday</li><li>Tuesday <img src="t.png" alt="a small map"></li></ul>
<pre>keep this code</pre><script>var greeting = "hello";</script>
</body></html>"""

XLIFF12 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="app" source-language="en" target-language="de" datatype="plaintext">
  <body>
   <trans-unit id="1"><source>Save <g id="b1">all</g> files<x id="br"/> now</source></trans-unit>
   <trans-unit id="2" translate="no"><source>Acme</source></trans-unit>
   <trans-unit id="3"><source>Cancel</source><target state="new">old</target></trans-unit>
  </body>
 </file>
</xliff>"""

XLIFF20 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="2.0" xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="en" trgLang="fr">
 <file id="f1">
  <unit id="u1"><segment><source>Click <pc id="1">here</pc> to start<ph id="2"/></source></segment>
   <ignorable><source> </source></ignorable>
   <segment><source>Then wait.</source></segment></unit>
  <unit id="u2" translate="no"><segment><source>Acme</source></segment></unit>
 </file>
</xliff>"""
