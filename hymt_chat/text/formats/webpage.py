"""HTML pages (.html/.htm) and XHTML (EPUB's chapters): block by block, inline tags kept.

A *block* is an element that holds text and only inline elements (a ``<p>``, ``<li>``, ``<td>``,
``<h1>``…, or a ``<div>`` with text): it goes as one tagged sentence, its inline elements
(``<b>``, ``<a href>``, ``<span>``; the HTML standard's "phrasing content", §3.2.5.2.5) as paired
tags, ``<br>``, ``<img>`` and code as kept atoms. Not translated, as in the API's markup handling
(:mod:`hymt_chat.api.markup`): ``script``, ``style``, ``code``, ``pre`` and the like, and any
element with ``translate="no"`` (HTML §6.9 "the translate attribute") or
``class="notranslate"``. The attributes people read are translated too: ``alt``, ``title``,
``placeholder``, and ``<meta name="description">``'s ``content``.

HTML is parsed by lxml's HTML parser without network access, XHTML by the safe XML parser
(:func:`hymt_chat.text.formats.safety.parse_xml`); a page declaring entities is refused.
"""

from __future__ import annotations

import re
from html.entities import name2codepoint
from typing import Literal

from lxml import etree
from lxml import html as lxml_html

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import Mixed, escape, plain_of, xml_chars
from hymt_chat.text.formats.safety import FormatError, parse_xml
from hymt_chat.words.said import Said, said

__all__ = ["CODE_ELEMENTS", "html_units", "read_html", "read_xhtml", "summary"]

# Elements whose content is code or markup, not prose: never translated, by a page and by the
# API's markup handling (hymt_chat.api.markup) alike.
CODE_ELEMENTS = frozenset({"script", "style", "code", "pre", "kbd", "samp", "var", "textarea",
                           "noscript", "template", "math", "svg"})
NEVER = CODE_ELEMENTS | {"head"}  # a page's <head>: its title and description are read apart
INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "data", "dfn", "em", "i", "mark",
                    "q", "s", "small", "span", "strong", "sub", "sup", "time", "u", "font",
                    "ins", "del", "big", "tt", "label", "ruby", "rt", "rp", "wbr", "br", "img",
                    "code", "kbd", "samp", "var"})
_ATOMS = frozenset({"br", "img", "wbr", "code", "kbd", "samp", "var", "ruby"})
_ATTRS = ("alt", "title", "placeholder")
_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)
_DOCTYPE = re.compile(rb"(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<!doctype",
                      re.IGNORECASE | re.DOTALL)


def _local(el: etree._Element) -> str:
    """The tag's name without namespace, lower-cased (HTML's parser keeps names that are no
    XML names, ``h1±x``, which QName refuses)."""
    return el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""


def _kept(el: etree._Element) -> bool:
    return (el.get("translate") == "no" or "notranslate" in (el.get("class") or "").split()
            or _local(el) in NEVER)


def _classify(el: etree._Element) -> Literal["pair", "atom"]:
    """Known inline elements are paired tags; anything else inside a block is kept whole."""
    name = _local(el)
    return "pair" if name in INLINE and name not in _ATOMS and not _kept(el) else "atom"


def _inline_only(el: etree._Element) -> bool:
    return all(not isinstance(c.tag, str) or (_local(c) in INLINE and _inline_only(c))
               or _kept(c) for c in el)


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


class _Attr:
    def __init__(self, el: etree._Element, name: str) -> None:
        self.el, self.name = el, name
        self.tagged = escape(el.get(name) or "")

    def write(self, translated: str) -> None:
        self.el.set(self.name, plain_of(translated))


class _Loose:
    """Text beside block children (``<div>Hello<p>…</p>there</div>``): each piece alone."""

    def __init__(self, el: etree._Element, attr: Literal["text", "tail"]) -> None:
        self.el, self.attr = el, attr
        raw = getattr(el, attr) or ""
        core = raw.strip()
        self.lead, self.trail = raw[: raw.find(core)] if core else raw, raw[raw.find(core)
                                                                             + len(core):]
        self.tagged = escape(core)

    def write(self, translated: str) -> None:
        setattr(self.el, self.attr, xml_chars(self.lead + plain_of(translated) + self.trail))


def html_units(root: etree._Element) -> tuple[list[Unit], int]:
    """The units of a page, in document order, and how many elements were kept as marked."""
    units: list[Unit] = []
    kept = 0

    def walk(el: etree._Element) -> None:
        nonlocal kept
        if not isinstance(el.tag, str):
            return
        name = _local(el)
        if _kept(el):
            kept += name not in NEVER
            return
        for attr in _ATTRS:
            if _has_letters(el.get(attr) or ""):
                units.append(Unit.of(_Attr(el, attr)))
        if name == "meta" and (el.get("name") or "").lower() == "description" and \
                _has_letters(el.get("content") or ""):
            units.append(Unit.of(_Attr(el, "content")))
        if name in ("html", "body") or not _inline_only(el):
            if name not in ("html",) and _has_letters(el.text or ""):
                units.append(Unit.of(_Loose(el, "text")))
            for child in el:
                walk(child)
                if isinstance(child.tag, str) and _has_letters(child.tail or ""):
                    units.append(Unit.of(_Loose(child, "tail")))
            return
        mixed = Mixed(el, _classify)
        if _has_letters(plain_of(mixed.tagged)):
            units.append(Unit.of(mixed))
        for child in el.iter():  # attributes inside a block (an <img alt> in a paragraph)
            if child is not el and isinstance(child.tag, str) and not _kept(child):
                for attr in _ATTRS:
                    if _has_letters(child.get(attr) or ""):
                        units.append(Unit.of(_Attr(child, attr)))

    root_el = root
    head = next((c for c in root_el if _local(c) == "head"), None)
    if head is not None:  # the title and description are read; the rest of <head> is not
        for el in head.iter():
            if _local(el) == "title" and _has_letters(el.text or ""):
                units.append(Unit.of(Mixed(el, _classify)))
            elif _local(el) == "meta" and (el.get("name") or "").lower() == "description" \
                    and _has_letters(el.get("content") or ""):
                units.append(Unit.of(_Attr(el, "content")))
    walk(root_el)
    return units, kept


def summary(root: etree._Element, kept: int) -> list[Said]:
    """What a page kept as it was: its code and scripts (if any), the elements marked."""
    code = any(_local(el) in CODE_ELEMENTS for el in root.iter() if isinstance(el.tag, str))
    return ([said("kept_code")] if code else []) + (
        [said("kept_marked_elements", count=kept)] if kept else [])


def read_html(data: bytes, label: str) -> Source:
    if b"\x00" in data:
        raise FormatError(f"{label} is not an HTML page (it holds binary content).").saying(
            "file_damaged")
    if _ENTITY.search(data):
        raise FormatError(f"{label} declares entities (the shape of an XXE attack): "
                          "refused.").saying("file_unsafe")
    parser = lxml_html.HTMLParser(no_network=True, remove_comments=False, encoding=None)
    try:
        doc = lxml_html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as err:
        raise FormatError(f"{label} could not be read as HTML ({err}).").saying(
            "file_damaged") from None
    tree = doc.getroottree()
    has_doctype = bool(_DOCTYPE.match(data))
    units, kept = html_units(doc)

    def serialize() -> bytes:
        # In the page's own encoding (its <meta charset> stays true); a character it cannot
        # hold is written as a character reference.
        # lxml gives a page without a doctype HTML 4's: only the page's own is written.
        encoding = tree.docinfo.encoding or "utf-8"
        if not has_doctype:
            return bytes(lxml_html.tostring(tree.getroot(), encoding=encoding, method="html"))
        return bytes(lxml_html.tostring(tree, doctype=tree.docinfo.doctype, encoding=encoding,
                                        method="html"))

    return Source(units, serialize, summary(doc, kept))


_NAMED = re.compile(rb"&([A-Za-z][A-Za-z0-9]*);")
_XML_NAMED = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})


def _numeric(m: re.Match[bytes]) -> bytes:
    code = name2codepoint.get(m.group(1).decode())
    return m.group(0) if code is None or m.group(1) in _XML_NAMED else b"&#%d;" % code


def read_xhtml(data: bytes, label: str) -> tuple[etree._ElementTree, list[Unit], int]:
    """An XHTML document (an EPUB chapter): the parsed tree and its units. XHTML 1.1's named
    entities (``&nbsp;``, defined by its DTD, which is never loaded) are read as the characters
    they name (HTML's list, :data:`html.entities.name2codepoint`)."""
    tree = parse_xml(_NAMED.sub(_numeric, data), label)
    units, kept = html_units(tree.getroot())
    return tree, units, kept
