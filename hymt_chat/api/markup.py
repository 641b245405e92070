"""HTML and XML: translate the text between tags, keep every tag and attribute as it was.

Parsed with lxml, never with regexes: text and tails of elements are the translatable slots,
everything else (tags, attributes, comments, entities re-escaped on output) is copied. Not
translated: ``script``, ``style``, ``code``, ``pre`` and the like, any element marked
``translate="no"`` or ``class="notranslate"`` (the HTML standard's and the usual convention,
which browser extensions and Weblate use), and the tags a DeepL client names in
``ignore_tags``. XML is parsed without entity expansion or network access (no XXE), and a
fragment that is not well-formed is refused with the parser's own reason.

Each slot is one call of *translate*: a sentence cut by inline tags (``Hello <b>world</b>``) is
translated in pieces. That keeps the tags exactly; it costs some fluency where tags split a
sentence.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from lxml import etree
from lxml import html as lxml_html

from hymt_chat.api.together import all_or_first_error
from hymt_chat.errors import InputError
from hymt_chat.text.formats.webpage import CODE_ELEMENTS

__all__ = ["MarkupError", "text_content", "translate_markup"]

Kind = Literal["html", "xml"]
Translate = Callable[[str], Awaitable[str]]

_WRAP = "hymt-fragment"
_DOCUMENT = re.compile(r"\s*(<!doctype|<html[\s>])", re.IGNORECASE)
_XML_DECL = re.compile(r"\s*<\?xml[^>]*\?>", re.IGNORECASE)
# A document type declaration before the root (DeepL takes `<!DOCTYPE html>` with
# tag_handling=xml): kept as written, never parsed, so an internal subset declares nothing.
_XML_DOCTYPE = re.compile(r"\s*<!DOCTYPE\s[^>\[]*(\[[^\]]*\])?\s*>", re.IGNORECASE)


class MarkupError(InputError):
    """The text is not the markup it was said to be."""


def _xml_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, remove_comments=False)


class _Tree:
    """A parsed fragment or document and how to write it back."""

    def __init__(self, markup: str, kind: Kind) -> None:
        self.kind = kind
        self.document = kind == "html" and bool(_DOCUMENT.match(markup))
        self.decl = ""
        self.lead = markup[: len(markup) - len(markup.lstrip())]  # lxml.html drops it
        markup = markup[len(self.lead):]
        try:
            if self.document:
                self.root = lxml_html.document_fromstring(markup)
            elif kind == "html":
                self.root = lxml_html.fragment_fromstring(markup, create_parent=_WRAP)
            else:
                for prolog in (_XML_DECL, _XML_DOCTYPE):
                    match = prolog.match(markup)
                    if match:
                        self.decl, markup = self.decl + match.group(0), markup[match.end():]
                self.root = etree.fromstring(f"<{_WRAP}>{markup}</{_WRAP}>", _xml_parser())
        except (etree.XMLSyntaxError, etree.ParserError, ValueError) as err:
            name = "XML" if kind == "xml" else "HTML"
            raise MarkupError(f"The text is not well-formed {name}: {err}.") from None

    def write(self) -> str:
        if self.document:
            return self.lead + str(lxml_html.tostring(self.root, encoding="unicode",
                                                      method="html", doctype="<!DOCTYPE html>"))
        method = "html" if self.kind == "html" else "xml"
        head = html.escape(self.root.text or "", quote=False)
        body = "".join(etree.tostring(child, encoding="unicode", method=method)
                       for child in self.root)
        return self.lead + self.decl + head + body


def _name(el: etree._Element) -> str | None:
    if not isinstance(el.tag, str):
        return None  # a comment or processing instruction
    return str(etree.QName(el).localname).lower()


def _slots(tree: _Tree, ignore: frozenset[str]) -> list[tuple[etree._Element, str]]:
    """(element, "text" | "tail") for every piece of text that is to be translated."""
    skip_cache: dict[etree._Element, bool] = {}

    def skipped(el: etree._Element | None) -> bool:
        if el is None:
            return False
        if el not in skip_cache:
            name = _name(el)
            own = (name is None or name in CODE_ELEMENTS or name in ignore
                   or (el.get("translate") or "").lower() == "no"
                   or "notranslate" in (el.get("class") or "").split())
            skip_cache[el] = own or skipped(el.getparent())
        return skip_cache[el]

    out = []
    for el in tree.root.iter():
        if el.text and el.text.strip() and not skipped(el):
            out.append((el, "text"))
        if el is not tree.root and el.tail and el.tail.strip() and not skipped(el.getparent()):
            out.append((el, "tail"))
    return out


def text_content(markup: str, kind: Kind, ignore_tags: Iterable[str] = ()) -> str:
    """The translatable text alone, one slot a line: what language detection should read."""
    tree = _Tree(markup, kind)
    ignore = frozenset(t.strip().lower() for t in ignore_tags if t.strip())
    return "\n".join(getattr(el, attr).strip() for el, attr in _slots(tree, ignore))


async def translate_markup(markup: str, kind: Kind, translate: Translate, *,
                           ignore_tags: Iterable[str] = ()) -> str:
    """*markup* with each text slot replaced by ``await translate(text)`` (its surrounding
    whitespace kept); raises MarkupError when it does not parse."""
    tree = _Tree(markup, kind)
    ignore = frozenset(t.strip().lower() for t in ignore_tags if t.strip())
    slots = _slots(tree, ignore)

    async def one(el: etree._Element, attr: str) -> None:
        value: str = getattr(el, attr)
        core = value.strip()
        lead, trail = value[: len(value) - len(value.lstrip())], value[len(value.rstrip()):]
        setattr(el, attr, lead + await translate(core) + trail)

    await all_or_first_error(one(el, attr) for el, attr in slots)
    return tree.write()
