"""What people send that must not be trusted: each refused in one clear sentence, never a crash.

Corrupt, encrypted and macro-enabled Office files, zip bombs (sizes declared, and sizes lied
about), XXE and entity bombs in XML, HTML and XLIFF, a document over the character limit. The
bombs are built small and checked for what bounds them (the declared sizes are refused from the
central directory, a lie stops at the declared size); ``benchmarks/document_bomb.py`` measures a
50 MB one's time and memory.
"""

import io
import struct
import zipfile

import docx
import pytest

from hymt_chat.errors import InputError, InputTooLongError
from hymt_chat.modes.documents import load_document
from hymt_chat.text.formats import FormatError
from hymt_chat.text.formats.safety import MAX_UNPACKED, MAX_XML, open_package


def _docx(text="Hello world") -> bytes:
    d = docx.Document()
    d.add_paragraph(text)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _rezip(data: bytes, replace=None, add=None) -> bytes:
    replace, add = replace or {}, add or {}
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w",
                                                                   zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info.filename, replace.get(info.filename, src.read(info)))
        for name, raw in add.items():
            out.writestr(name, raw)
    return buf.getvalue()


def _refused(name, data, *words, **kw):
    with pytest.raises(InputError) as caught:
        load_document(name, data, **kw)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize("name", ["a.docx", "a.pptx", "a.xlsx", "a.odt", "a.epub"])
def test_a_damaged_package_is_refused_as_damaged(name):
    _refused(name, b"PK\x03\x04 this is not really a zip", "damaged")
    _refused(name, bytes(range(256)) * 10, "damaged")


def test_a_zip_without_the_main_part_is_not_what_its_name_says():
    _refused("a.pptx", _docx(), "ppt/presentation.xml is missing")
    _refused("a.xlsx", _docx(), "not an Excel workbook")


def test_a_password_protected_office_file_says_so():
    """A password-protected .docx is a CFB (OLE2) container (MS-OFFCRYPTO §2.1), as are the
    old binary formats: its magic is D0 CF 11 E0 A1 B1 1A E1 ([MS-CFB] §2.2)."""
    _refused("secret.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600,
             "password-protected")


def test_an_encrypted_zip_entry_is_refused():
    """Bit 0 of the general purpose flag marks an encrypted entry (PKWARE APPNOTE §4.4.4)."""
    data = bytearray(_docx())
    central = data.rfind(b"PK\x01\x02")
    while central != -1:
        flags = struct.unpack_from("<H", data, central + 8)[0]
        struct.pack_into("<H", data, central + 8, flags | 1)
        central = data.rfind(b"PK\x01\x02", 0, central)
    _refused("a.docx", bytes(data), "encrypted")


def test_a_bomb_declaring_gigabytes_is_refused_from_the_directory_alone():
    """The central directory's uncompressed size (APPNOTE §4.4.9) is what a bomb declares; a
    4 GB claim is refused before any entry is inflated."""
    data = bytearray(_docx())
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 0xFFFF0000)
    message = _refused("bomb.docx", bytes(data), "decompression bomb")
    assert f"more than {MAX_UNPACKED // 1_048_576} MB" in message


def test_a_bomb_that_really_expands_past_the_cap_is_refused():
    big = b"<w:t>" + b"A" * (MAX_UNPACKED + 1) + b"</w:t>"
    bomb = _rezip(_docx(), {"word/document.xml": big})
    assert len(bomb) < 2 * 1024 * 1024  # it passes the upload size limit
    _refused("bomb.docx", bomb, "decompression bomb")


def test_a_bomb_that_lies_about_its_size_stops_at_the_declared_size():
    """An entry inflating past its declared size is cut there (zipfile reads no more than the
    declared size, then the CRC disagrees); what is held never exceeds the declared sizes."""
    bomb = bytearray(_rezip(_docx(), {"word/document.xml": b"B" * (8 * 1024 * 1024)}))
    for sig, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        pos = bomb.find(sig)
        while pos != -1:
            name_len = struct.unpack_from("<H", bomb, pos + (28 if sig == b"PK\x01\x02" else 26))
            name_at = pos + (46 if sig == b"PK\x01\x02" else 30)
            if bomb[name_at:name_at + name_len[0]] == b"word/document.xml":
                struct.pack_into("<I", bomb, pos + offset, 1000)
            pos = bomb.find(sig, pos + 4)
    with pytest.raises(FormatError, match="damaged|decompression bomb"):
        open_package(bytes(bomb), "'bomb.docx'")


def test_a_package_with_more_markup_than_is_parsed_is_refused_before_parsing():
    """Under the unpacked cap but over MAX_XML (lxml's tree is ~16 times its XML): refused by
    size, so that a parse's memory stays bounded."""
    filler = b"<w:p/>" * (MAX_XML // 6 + 1)
    body = (b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/'
            b'main"><w:body><w:p><w:r><w:t>Hi there</w:t></w:r></w:p>' + filler
            + b"</w:body></w:document>")
    _refused("big.docx", _rezip(_docx(), {"word/document.xml": body}), "MB of text markup")


@pytest.mark.parametrize("name", ["a.docm", "a.xlsm", "a.pptm", "A.DOCM"])
def test_macro_enabled_files_are_refused_by_name(name):
    _refused(name, _docx(), "macros")


def test_a_docx_carrying_a_vba_project_is_refused():
    """ECMA-376 Part 1 §15.2.1: a VBA project is the part ``vbaProject.bin``."""
    _refused("a.docx", _rezip(_docx(), add={"word/vbaProject.bin": b"\0" * 64}), "macros")


XXE = b"""<?xml version="1.0"?>
<!DOCTYPE xliff [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file><body>
<trans-unit id="1"><source>&xxe;</source></trans-unit></body></file></xliff>"""
LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file><body>
<trans-unit id="1"><source>&lol3;</source></trans-unit></body></file></xliff>"""


@pytest.mark.parametrize("payload", [XXE, LAUGHS], ids=["xxe", "billion-laughs"])
def test_xml_entities_are_refused_in_xliff(payload):
    _refused("a.xlf", payload, "entities")


def test_xml_entities_are_refused_inside_an_office_package():
    evil = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/'
            b'main"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>')
    _refused("a.docx", _rezip(_docx(), {"word/document.xml": evil}), "entities")


def test_xml_entities_are_refused_in_html():
    page = b'<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]><p>&x; hello</p>'
    _refused("a.html", page, "entities")


def test_broken_xml_is_refused_with_its_line():
    _refused("a.xlf", b'<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
             b"<file><body>\n<trans-unit></body>", "line 3")


def test_not_xliff_is_refused():
    _refused("a.xlf", b"<root><a>hello</a></root>", "not XLIFF")


def test_a_document_over_the_character_limit_is_refused_whole():
    with pytest.raises(InputTooLongError):
        load_document("long.docx", _docx("word " * 400), max_chars=1000)


def test_a_document_without_text_says_there_is_nothing_to_translate():
    _refused("empty.docx", _docx(""), "no text")


@pytest.mark.parametrize("name", ["a.docx", "a.pptx", "a.html", "a.xlf"])
def test_mutated_files_are_refused_or_translated_never_a_crash(name):
    """40 seeded mutations per kind (bytes of the file, or of the XML inside the zip): each
    either loads, translates and writes back, or is refused with an InputError."""
    import asyncio
    import random

    from hymt_chat.modes.documents import translate_document
    from tests.support.office_files import PAGE, XLIFF12, pptx_sheet, upper

    async def model(text, *, on_progress=None):
        return upper(text)

    data = {"a.docx": _docx, "a.pptx": pptx_sheet, "a.html": lambda: PAGE,
            "a.xlf": lambda: XLIFF12}[name]()
    rng = random.Random(name)
    for _ in range(40):
        if data[:2] == b"PK" and rng.random() < 0.5:
            with zipfile.ZipFile(io.BytesIO(data)) as src:
                parts = {i.filename: src.read(i) for i in src.infolist()}
            xml = rng.choice([n for n in parts if n.endswith(".xml")])
            raw = parts[xml]
            pos = rng.randrange(len(raw))
            mutated = _rezip(data, {xml: raw[:pos] + bytes([rng.randrange(256)]) + raw[pos + 1:]})
        else:
            buf = bytearray(data)
            for _ in range(rng.randrange(1, 6)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            mutated = bytes(buf)
        try:
            doc = load_document(name, mutated)
            doc.encode(asyncio.run(translate_document(doc, model)))
        except InputError:
            pass
