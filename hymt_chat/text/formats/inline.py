"""Inline markup <-> one tagged sentence: how a paragraph cut by formatting reaches the model whole.

A paragraph whose words carry different formatting (``Hello <b>bold</b> world``) is sent as ONE
sentence with numbered tags, ``Hello <b id="1">bold</b> world``, and written back by reading the
tags of the answer: the words inside ``<b id="N">…</b>`` get element N's formatting again,
``<x id="N"/>`` puts element N (an image, a tab, a footnote, a field) back where it stands.

The tag shape, measured (demo model Qwen2.5-Coder-0.5B on the real vLLM CPU server; 6 sentences
with one formatted phrase, fr/de/es->en and en->fr/de, x 2 samples; the tag pair kept once, in
order): ``<g1>…</g1>`` 3/12, ``<b>…</b>`` 5/12, ``<span id="1">…</span>`` 5/12, ``[1]…[/1]``
6/12, ``<b id="1">…</b>`` 8/12 <- chosen. A sentence whose tags did not come back is
translated around them (:mod:`hymt_chat.modes.documents`), so the shape costs fluency, never
formatting. Two shapes of markup:

* **runs** (OOXML: ``w:r``/``a:r``/``r``): a flat list of runs, each with its properties; runs of
  the paragraph's most common formatting are plain text, the others are tagged. Written back,
  each piece of text is a copy of its template run with the new text.
* **mixed content** (ODF, HTML, XLIFF): text, child elements and tails, nested; paired elements
  become ``<b id="N">…</b>`` (nesting kept), the others ``<x id="N"/>``.

The tags are the ones ``hymt_chat.modes.documents`` protects: the caller lists them
(:func:`tags_of`) and a translation that lost one is translated around them instead, so the
tags reaching :func:`read_tagged` are the source's, in the source's nesting.
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from lxml import etree

__all__ = ["TAG", "Mixed", "RunRules", "Runs", "escape", "plain_of", "read_tagged", "tags_of",
           "xml_chars"]

TAG = re.compile(r'<b id="(\d+)">|</b>|<x id="(\d+)"/>')
"""The tags this module writes: ``<b id="1">``, ``</b>``, ``<x id="2"/>``."""


def _open(number: int) -> str:
    return f'<b id="{number}">'


_CLOSE = "</b>"


def _atom(number: int) -> str:
    return f'<x id="{number}"/>'


Token = tuple[Literal["text", "open", "close", "atom"], str | int]


def escape(text: str) -> str:
    """Text as it goes into a tagged sentence (a literal ``<`` cannot be read as a tag)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tags_of(tagged: str) -> list[str]:
    """The tags of *tagged*, each occurrence: the spans the translation must keep."""
    return [m.group(0) for m in TAG.finditer(tagged)]


def plain_of(tagged: str) -> str:
    """The words of *tagged* without its tags (what is counted and checked for letters)."""
    return _text(TAG.sub("", tagged))


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot hold (§2.2 Char): never written into a document."""


def _text(raw: str) -> str:
    return xml_chars(html.unescape(raw))


def xml_chars(text: str) -> str:
    """*text* without the characters XML cannot hold."""
    return _NOT_XML.sub("", text)


def read_tagged(tagged: str) -> list[Token]:
    """Tokens of a tagged sentence; text unescaped, characters XML cannot hold left out."""
    tokens: list[Token] = []
    pos = 0
    for m in TAG.finditer(tagged):
        if m.start() > pos:
            tokens.append(("text", _text(tagged[pos:m.start()])))
        if m.group(1):
            tokens.append(("open", int(m.group(1))))
        elif m.group(2):
            tokens.append(("atom", int(m.group(2))))
        else:
            tokens.append(("close", 0))
        pos = m.end()
    if pos < len(tagged):
        tokens.append(("text", _text(tagged[pos:])))
    return tokens


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


# --- runs (OOXML) -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRules:
    """What the runs of one OOXML flavour look like (namespace-qualified tags)."""

    run: frozenset[str]  # text runs: w:r, a:r, r — or the bare text element itself (xlsx <t>)
    text: str  # the text element inside a run (w:t, a:t, t)
    props: str  # the properties element of a run (w:rPr, a:rPr, rPr)
    head: frozenset[str]  # children kept first, in place (w:pPr, a:pPr)
    tail: frozenset[str] = frozenset()  # children kept last (a:endParaRPr, rPh, phoneticPr)
    silent: frozenset[str] = frozenset()  # invisible marks moved to the head (bookmarks)
    dropped: frozenset[str] = frozenset()  # marks that mean nothing once the text changes
    ignorable: frozenset[str] = frozenset()  # run children that are no content (w:lastRenderedPageBreak)
    containers: frozenset[str] = frozenset()  # elements holding runs (w:hyperlink): paired tags
    holders: tuple[tuple[str, str], ...] = ()  # container -> the child holding its runs (w:sdt)
    preserve: bool = False  # write xml:space="preserve" on text elements (WordprocessingML)
    unseen: frozenset[str] = frozenset()  # properties that change nothing seen (w:lang, lang=…)


_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


@dataclass(slots=True)
class Runs:
    """One OOXML paragraph's runs as a tagged sentence, and the way back."""

    para: etree._Element
    rules: RunRules
    tagged: str = ""
    _head: list[etree._Element] = field(default_factory=list)
    _tail: list[etree._Element] = field(default_factory=list)
    _body: list[etree._Element] = field(default_factory=list)
    _templates: dict[int, etree._Element] = field(default_factory=dict)  # gN -> run to copy
    _atoms: dict[int, etree._Element] = field(default_factory=dict)  # xN -> element kept
    _base: etree._Element | None = None  # the run of the most common formatting

    def __post_init__(self) -> None:
        r = self.rules
        children = [c for c in self.para if isinstance(c.tag, str)]
        self._head = [c for c in children if c.tag in r.head or c.tag in r.silent]
        self._tail = [c for c in children if c.tag in r.tail]
        self._body = [c for c in children if c not in self._head and c not in self._tail
                      and c.tag not in r.dropped]
        items: list[tuple[str, etree._Element, str]] = []  # (kind, element, text)
        for child in self._body:
            if child.tag in r.run:
                items += self._split_run(child)
            elif child.tag in r.containers and self._container_text(child) is not None:
                items.append(("box", child, self._container_text(child) or ""))
            else:
                items.append(("atom", child, ""))
        weight: dict[bytes, int] = {}
        for kind, el, text in items:
            if kind == "run":
                weight[self._key(el)] = weight.get(self._key(el), 0) + len(text)
        base_key = max(weight, key=lambda k: weight[k]) if weight else None
        out: list[str] = []
        number = 0
        last_key: bytes | None = None
        for kind, el, text in items:
            if kind == "run" and self._key(el) == base_key:
                if self._base is None:
                    self._base = el
                if last_key is not None:
                    out.append(_CLOSE)
                    last_key = None
                out.append(escape(text))
                continue
            if kind == "run" and last_key == self._key(el):
                out.append(escape(text))  # the same formatting continues: one tag, not two
                continue
            if last_key is not None:
                out.append(_CLOSE)
                last_key = None
            number += 1
            if kind == "atom":
                self._atoms[number] = el
                out.append(_atom(number))
            elif kind == "box":
                self._templates[number] = el
                out.append(f"{_open(number)}{escape(text)}{_CLOSE}")
            else:
                self._templates[number] = el
                last_key = self._key(el)
                out.append(_open(number) + escape(text))
        if last_key is not None:
            out.append(_CLOSE)
        self.tagged = "".join(out)

    def _split_run(self, run: etree._Element) -> list[tuple[str, etree._Element, str]]:
        """A run's text pieces (the run their template) and, between them, what else it holds
        (a tab, a break, a drawing, a field code), each kept as an atom in a run of its own
        with the same properties."""
        r = self.rules
        if run.tag == r.text:
            return [("run", run, run.text or "")]
        items: list[tuple[str, etree._Element, str]] = []
        for child in run:
            if child.tag == r.props or child.tag in r.ignorable or not isinstance(child.tag, str):
                continue
            if child.tag == r.text:
                if items and items[-1][0] == "run":
                    items[-1] = ("run", run, items[-1][2] + (child.text or ""))
                else:
                    items.append(("run", run, child.text or ""))
                continue
            holder = copy.deepcopy(run)
            holder.tail = None
            for inner in list(holder):
                if inner.tag != r.props:
                    holder.remove(inner)
            holder.append(copy.deepcopy(child))
            items.append(("atom", holder, ""))
        return items or [("atom", run, "")]

    def _run_text(self, el: etree._Element) -> str | None:
        """The text of a plain text run; None for anything else (a tab, a drawing, a field)."""
        r = self.rules
        if el.tag not in r.run:
            return None
        if el.tag == r.text:
            return el.text or ""
        parts = []
        for child in el:
            if child.tag == r.text:
                parts.append(child.text or "")
            elif child.tag != r.props and child.tag not in r.ignorable:
                return None
        return "".join(parts)

    def _holder(self, el: etree._Element) -> etree._Element | None:
        """Where a container's runs are: itself, or its content child (w:sdt's w:sdtContent)."""
        inner = dict(self.rules.holders).get(el.tag)
        return el if inner is None else el.find(inner)

    def _container_text(self, el: etree._Element) -> str | None:
        holder = self._holder(el)
        if holder is None:
            return None
        texts = []
        for child in holder:
            text = self._run_text(child)
            if text is None:
                return None
            texts.append(text)
        return "".join(texts) if texts else None

    def _key(self, el: etree._Element) -> bytes:
        """The run's formatting as it is seen: its properties, less the ones that only say a
        language or a spell-check state (Word and PowerPoint split runs on those)."""
        props = el.find(self.rules.props)
        if props is None:
            return b""
        unseen = self.rules.unseen
        if unseen:
            props = copy.deepcopy(props)
            for child in list(props):
                if child.tag in unseen:
                    props.remove(child)
            for name in list(props.attrib):
                if name in unseen:
                    del props.attrib[name]
        return etree.tostring(props) if len(props) or props.attrib else b""

    def _new_run(self, template: etree._Element | None, text: str) -> etree._Element:
        r = self.rules
        if template is None:  # a paragraph without a plain run: a bare run
            template = etree.Element(next(iter(sorted(r.run))))
        run = copy.deepcopy(template)
        run.tail = None
        if run.tag == r.text:
            run.text = text
            return run
        for child in list(run):
            if child.tag != r.props:
                run.remove(child)
        t = etree.SubElement(run, r.text)
        t.text = text
        if r.preserve:
            t.set(_XML_SPACE, "preserve")
        return run

    def write(self, translated: str) -> None:
        """Put *translated* (this paragraph's tagged sentence, translated) into the paragraph."""
        for child in list(self.para):  # dropped marks go for good (w:pPr must stay first)
            if isinstance(child.tag, str):
                self.para.remove(child)
        out: list[etree._Element] = list(self._head)
        used: set[int] = set()
        current: int | None = None
        for kind, value in read_tagged(translated):
            if kind == "atom" and isinstance(value, int) and value in self._atoms:
                out.append(self._atoms[value])
                used.add(value)
            elif kind == "open" and isinstance(value, int) and value in self._templates:
                current = value
            elif kind == "close":
                current = None
            elif kind == "text" and value:
                template = self._templates.get(current) if current is not None else None
                if template is not None and template.tag in self.rules.containers:
                    box = copy.deepcopy(template)
                    box.tail = None
                    holder = self._holder(box)
                    assert holder is not None  # a container without one is an atom
                    inner = next((c for c in holder if self._run_text(c) is not None), None)
                    for child in list(holder):
                        holder.remove(child)
                    holder.append(self._new_run(inner, str(value)))
                    out.append(box)
                else:
                    out.append(self._new_run(template if template is not None else self._base,
                                             str(value)))
        out.extend(el for n, el in self._atoms.items() if n not in used)  # never lose an image
        out.extend(self._tail)
        for el in out:
            self.para.append(el)


# --- mixed content (ODF, HTML, XLIFF) ----------------------------------------------------------

Classify = Callable[[etree._Element], Literal["pair", "atom"]]


@dataclass(slots=True)
class Mixed:
    """An element's mixed content as a tagged sentence, and the way back into an element.

    *classify* says which children are paired (their content is part of the sentence) and which
    are atoms (kept whole). *copy_atoms*: write copies (XLIFF's target beside its source) rather
    than the elements themselves (which keeps a footnote's own paragraphs, translated apart).
    """

    root: etree._Element
    classify: Classify
    copy_atoms: bool = False
    tagged: str = ""
    _table: dict[int, etree._Element] = field(default_factory=dict)
    _top: list[int] = field(default_factory=list)  # numbers of the root's own children

    def __post_init__(self) -> None:
        self.tagged = "".join(self._encode(self.root, [0]))

    def _encode(self, el: etree._Element, counter: list[int]) -> list[str]:
        out = [escape(el.text or "")]
        for child in el:
            counter[0] += 1
            number = counter[0]
            self._table[number] = child
            if el is self.root:
                self._top.append(number)
            if not isinstance(child.tag, str):  # a comment or processing instruction
                out.append(_atom(number))
            elif self.classify(child) == "pair":
                out += [_open(number), *self._encode(child, counter), _CLOSE]
            else:
                out.append(_atom(number))
            out.append(escape(child.tail or ""))
        return out

    def write(self, translated: str, into: etree._Element | None = None) -> None:
        """Write *translated* into *into* (default: the element it was read from)."""
        target = self.root if into is None else into
        for child in list(target):
            target.remove(child)
        target.text = None
        stack = [target]
        used: set[int] = set()

        def add_text(text: str) -> None:
            parent = stack[-1]
            if len(parent):
                last = parent[-1]
                last.tail = (last.tail or "") + text
            else:
                parent.text = (parent.text or "") + text

        def add(el: etree._Element) -> None:
            el.tail = None
            stack[-1].append(el)

        for kind, value in read_tagged(translated):
            if kind == "text":
                add_text(str(value))
            elif kind == "atom" and value in self._table and value not in used:
                used.add(int(value))
                original = self._table[int(value)]
                add(copy.deepcopy(original) if self.copy_atoms else original)
            elif kind == "open" and value in self._table:
                used.add(int(value))
                original = self._table[int(value)]
                shell = copy.deepcopy(original)  # its attributes as parsed (set anew, lxml
                for child in list(shell):       # would refuse what HTML's parser let through)
                    shell.remove(child)
                shell.text = None
                add(shell)
                stack.append(shell)
            elif kind == "close" and len(stack) > 1:
                stack.pop()
        for number in self._top:  # never lose an image or a footnote the answer left out
            if number not in used and isinstance(self._table[number].tag, str):
                original = self._table[number]
                if self.classify(original) == "atom":
                    add(copy.deepcopy(original) if self.copy_atoms else original)
