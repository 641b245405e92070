"""Markdown that reads as the text it shows: for files a person reads (a transcript).

The chat escapes every punctuation mark of a text it shows (:func:`~hymt_chat.modes.wording.
escape_markdown`): nobody sees the backslashes in a chat bubble. A file is also read as plain
text, where "Agent\\: English" is noise. Here a mark is escaped only where Markdown would
otherwise change what is shown (a heading, a list, emphasis, a link, HTML, a table):

- :func:`as_markdown` writes a person's text (a message, a translation) that way, its lines
  kept as lines;
- :func:`tidy_escapes` drops from the app's own Markdown the escapes that change nothing
  (code blocks and code spans are left as they are).

Pure, no Markdown library: the rules are CommonMark's and GitHub's (GFM: tables,
strikethrough), read conservatively (when unsure, escape).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

__all__ = ["as_markdown", "tidy_escapes"]

_PUNCTUATION = frozenset(string.punctuation)  # what a backslash escapes in CommonMark
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_HEADING = re.compile(r"#{1,6}(\s|$)")
_ORDERED = re.compile(r"\d{1,9}")
_DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class _Context:
    """What the whole text says about its marks: emphasis and strikethrough need two of a
    mark, a link a closing bracket, a table a delimiter row."""

    pairs: frozenset[str]  # of "*", "_", "~": those that occur at least twice
    brackets: bool  # a "]" occurs: a "[" may open a link, a footnote, a checkbox
    table: bool  # a line may be a table's delimiter row: every "|" may be a cell's edge

    @classmethod
    def of(cls, text: str) -> _Context:
        lines = text.split("\n")
        return cls(frozenset(mark for mark in "*_~" if text.count(mark) >= 2), "]" in text,
                   any("|" in line and "-" in line and _DELIMITER_ROW.fullmatch(line)
                       for line in lines))


def _needs(line: str, i: int, context: _Context) -> bool:
    """Would ``line[i]``, unescaped, be read as Markdown rather than as itself?"""
    mark = line[i]
    start = len(line) - len(line.lstrip())
    body = line[start:]
    at = i - start
    before = line[i - 1] if i > 0 else " "
    after = line[i + 1] if i + 1 < len(line) else " "
    if at == 0:  # what opens a block: a heading, a quote, a list item, a rule, an underline
        if mark == "#" and _HEADING.match(body):
            return True
        if mark == ">" or (mark in "-+*" and after in " \t"):
            return True
        if mark in "-*_=" and set(body) <= {mark, " ", "\t"}:
            return True
    if mark in ".)" and at > 0 and _ORDERED.fullmatch(body[:at]) and after in " \t":
        return True  # "1. " or "1) " opening a line: a numbered list
    if mark == "\\":
        return after in _PUNCTUATION  # it would escape the mark after it
    if mark == "`":
        return True  # a code span
    if mark in "*_~":
        if mark not in context.pairs or (before.isspace() and after.isspace()):
            return False
        return not (mark == "_" and before.isalnum() and after.isalnum())  # snake_case
    if mark == "[":  # escaped, it opens no link nor image: "!" and "(" need nothing
        return context.brackets
    if mark == "<":
        return after.isalpha() or after in "/!?"  # HTML, a comment, an autolink
    if mark == "&":
        return _ENTITY.match(line, i) is not None  # "&amp;" would be shown as "&"
    if mark == "|":
        return context.table
    return False


def _escaped(line: str, context: _Context) -> str:
    return "".join("\\" + mark if _needs(line, i, context) else mark
                   for i, mark in enumerate(line))


def as_markdown(text: str) -> str:
    """*text* as Markdown that shows it as written and reads as it is: each line a line (a
    hard break: two spaces), blank lines between paragraphs, marks escaped only where
    Markdown would take them for its own. Indentation goes (it would make a code block)."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n")
             .split("\n")]
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    paragraphs = [p for p in paragraphs if p]
    context = _Context.of("\n".join(line for p in paragraphs for line in p))
    return "\n\n".join("  \n".join(_escaped(line, context) for line in p) for p in paragraphs)


def _tidy_line(line: str, context: _Context) -> str:
    plain: list[str] = []
    escaped: list[bool] = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] in _PUNCTUATION:
            plain.append(line[i + 1])
            escaped.append(True)
            i += 2
        else:
            plain.append(line[i])
            escaped.append(False)
            i += 1
    text = "".join(plain)
    return "".join("\\" + mark if was and _needs(text, j, context) else mark
                   for j, (mark, was) in enumerate(zip(plain, escaped, strict=True)))


def tidy_escapes(markdown: str) -> str:
    """The app's Markdown without the escapes that change nothing ("Agent\\: English" ->
    "Agent: English"); its own marks, code blocks and code spans are left as they are."""
    lines = markdown.split("\n")
    context = _Context.of(_ESCAPE.sub(r"\1", markdown))
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        opening = _FENCE.match(line)
        if fence is not None:  # inside a code block: as written, until its closing fence
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(
                    fence) and not line.strip().strip(fence[0]):
                fence = None
            out.append(line)
        elif opening:
            fence = opening.group(1)
            out.append(line)
        elif "`" in _ESCAPE.sub("", line):  # a code span: its backslashes are its text
            out.append(line)
        else:
            out.append(_tidy_line(line, context))
    return "\n".join(out)
