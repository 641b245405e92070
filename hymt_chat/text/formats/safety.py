"""Opening what people send without trusting it: zip packages and XML.

Every office file, OpenDocument and EPUB is a zip (ECMA-376 Part 2 "Open Packaging
Conventions"; OpenDocument 1.3 part 2 §3; EPUB OCF 3.3 §4), and its text is XML. Before a byte
is parsed:

* the zip's **declared** sizes are added up and compared with :data:`MAX_UNPACKED` (a bomb that
  declares gigabytes is refused at once, from the central directory alone), and every entry is
  then read through a counter that stops at its declared size and at the same cap (a bomb that
  lies about its sizes is refused after reading at most the cap, in 1 MiB chunks);
* an encrypted entry or a CFB container (the OLE2 wrapper of a password-protected .docx, or an
  old binary .doc/.xls/.ppt: magic ``D0 CF 11 E0``) is refused as such;
* a package with VBA macros (``vbaProject.bin``, a macro-enabled content type) is refused.

XML is parsed by lxml with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False``
and no huge trees, and a document declaring entities is refused (lxml's FAQ "How do I use lxml
safely as a web-service endpoint?"): no XXE, no entity expansion bomb.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass

from lxml import etree

from hymt_chat.errors import InputError

__all__ = ["MAX_ENTRIES", "MAX_UNPACKED", "MAX_XML", "FormatError", "Package", "open_package", "parse_xml",
           "refuse_macros"]

MAX_UNPACKED = 64 * 1024 * 1024
"""Uncompressed bytes a package may hold in all: a 2 MB .docx of text unpacks to ~20 MB at most
(text deflates about tenfold); a bomb claims gigabytes."""
MAX_XML = 16 * 1024 * 1024
"""Bytes of XML parsed for one document, all its parts together: lxml's tree takes about 16
times its XML (measured: a .docx of 0.7 MB of XML, +11 MB resident), so this bounds a parse to
~250 MB. 200,000 characters of text (HYMT_MAX_INPUT_CHARS) are 2-4 MB of Word's XML."""
MAX_ENTRIES = 20_000
_CHUNK = 1 << 20
_CFB = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)


class FormatError(InputError):
    """A document that cannot be read safely as what its name says: one sentence saying why."""


@dataclass(slots=True)
class Package:
    """A zip read whole (within the caps), entries in their original order and compression."""

    infos: list[zipfile.ZipInfo]
    data: dict[str, bytes]
    label: str = ""
    parsed: int = 0  # bytes of XML parsed from it so far (MAX_XML)

    def charge(self, size: int) -> None:
        """Count *size* bytes of XML about to be parsed against :data:`MAX_XML`."""
        self.parsed += size
        if self.parsed > MAX_XML:
            raise FormatError(f"{self.label} holds more than {MAX_XML // 1_048_576} MB of text "
                              "markup; split it and send the parts.").saying("file_too_much")

    def parse(self, name: str) -> etree._ElementTree:
        """Parse entry *name* as XML, within the document's :data:`MAX_XML`."""
        self.charge(len(self.data[name]))
        return parse_xml(self.data[name], f"{self.label} ({name})")

    def names(self) -> list[str]:
        return [i.filename for i in self.infos]

    def write(self, changed: dict[str, bytes]) -> bytes:
        """The package again, *changed* entries replaced, the rest copied as they were (order and
        compression kept: EPUB's ``mimetype`` stays first and stored)."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            for info in self.infos:
                zf.writestr(info, changed.get(info.filename, self.data[info.filename]),
                            compress_type=info.compress_type)
        return out.getvalue()


def open_package(data: bytes, label: str, *, max_unpacked: int = MAX_UNPACKED) -> Package:
    """Read a zip package under the caps, or raise FormatError saying what is wrong with it."""
    if data.startswith(_CFB):
        raise FormatError(f"{label} is password-protected or an old binary Office file (.doc, "
                          ".xls, .ppt): save it unprotected in the current format and send it "
                          "again.").saying("file_old_office")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise FormatError(f"{label} is damaged or not what its name says (it is not a valid "
                          "zip package).").saying("file_damaged") from None
    if len(infos) > MAX_ENTRIES:
        raise FormatError(f"{label} holds {len(infos):,} files; at most {MAX_ENTRIES:,} are "
                          "read.").saying("file_too_much")
    declared = sum(i.file_size for i in infos)
    if declared > max_unpacked:
        raise FormatError(_bomb(label, declared, max_unpacked)).saying("file_too_much")
    if any(i.flag_bits & 0x1 for i in infos):
        raise FormatError(f"{label} is encrypted: save it without a password and send it "
                          "again.").saying("file_protected")
    contents: dict[str, bytes] = {}
    total = 0
    for info in infos:
        chunks = []
        size = 0
        try:
            with zf.open(info) as entry:
                while chunk := entry.read(_CHUNK):
                    size += len(chunk)
                    total += len(chunk)
                    if size > info.file_size or total > max_unpacked:
                        raise FormatError(_bomb(label, total, max_unpacked)).saying(
                            "file_too_much")
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError):
            raise FormatError(f"{label} is damaged ({info.filename} cannot be "
                              "unpacked).").saying("file_damaged") from None
        contents[info.filename] = b"".join(chunks)
    return Package(infos, contents, label)


def _bomb(label: str, size: int, cap: int) -> str:
    return (f"{label} unpacks to more than {cap // 1_048_576} MB ({size / 1_048_576:,.0f} MB or "
            "more): refused, as a decompression bomb would be.")


def refuse_macros(package: Package, label: str) -> None:
    """A package carrying VBA macros is refused (ECMA-376: ``vbaProject.bin``, and the
    ``macroEnabled`` content types of .docm/.xlsm/.pptm)."""
    types = package.data.get("[Content_Types].xml", b"")
    if any(n.lower().endswith("vbaproject.bin") for n in package.names()) or (
            b"macroEnabled" in types):
        raise FormatError(f"{label} contains macros; documents with macros are not translated. "
                          "Save it as a document without macros and send it again.").saying(
            "file_macros")


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, remove_comments=False, strip_cdata=False)


def parse_xml(data: bytes, label: str) -> etree._ElementTree:
    """Parse XML safely (no entities, no DTD, no network), or raise FormatError with the line."""
    if len(data) > MAX_XML:
        raise FormatError(f"{label} is more than {MAX_XML // 1_048_576} MB of markup; split it "
                          "and send the parts.").saying("file_too_much")
    if _ENTITY.search(data):
        raise FormatError(f"{label} declares XML entities (the shape of an XXE attack or an entity "
                          "bomb): refused.").saying("file_unsafe")
    try:
        return etree.ElementTree(etree.fromstring(data, _parser()))
    except etree.XMLSyntaxError as err:
        line = err.lineno or 0
        raise FormatError(f"{label} is not well-formed XML (line {line}: {err.msg}).").saying(
            "file_damaged") from None
