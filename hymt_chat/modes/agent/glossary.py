"""Per-conversation glossary and do-not-translate list, and the ``/glossary`` command.

An entry is a bilingual pair between the customer's and the agent's language, and works both
ways: ``/glossary add 订单号 = order number`` turns the customer's 订单号 into "order number"
for the agent and the agent's "order number" into 订单号 for the customer. The written order
is "customer's term = agent's term" (the issue's example); when language detection is sure
the agent wrote it the other way round, the sides are swapped, and the answer says which is
which. An entry remembers the customer language it was made for and is not applied after the
customer language changes (a Spanish term must not land in a French reply).

``/glossary add JD-Express`` (no ``=``) keeps a term untranslated. How entries reach the model
(masked with their replacement, or through the terminology template) is decided by agent.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from hymt_chat.errors import CommandError
from hymt_chat.lang.detect import detect_language
from hymt_chat.words.said import Code, Said, said

__all__ = [
    "MAX_ENTRIES",
    "MAX_TERM_CHARS",
    "Entry",
    "Glossary",
    "GlossaryCommand",
    "GlossaryError",
    "parse_glossary",
    "run_glossary",
]

MAX_ENTRIES = 200
"""Per conversation: every entry is matched against every message."""
MAX_TERM_CHARS = 100

Direction = Literal["customer->agent", "agent->customer"]


class GlossaryError(CommandError):
    """A /glossary command that cannot be carried out; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class Entry:
    customer_term: str
    agent_term: str
    customer_language: str | None  # the customer language when added; None: any

    def applies(self, customer_language: str | None) -> bool:
        return self.customer_language is None or same_family(self.customer_language,
                                                              customer_language)


@dataclass(slots=True)
class Glossary:
    entries: list[Entry] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)  # do-not-translate terms

    def __len__(self) -> int:
        return len(self.entries) + len(self.keep)

    # --- changing it -------------------------------------------------------------------------

    def add(self, left: str, right: str, *, agent_language: str,
            customer_language: str | None) -> Entry:
        """Add (or replace) a pair written "customer's term = agent's term" (sides guessed)."""
        left, right = _term(left), _term(right)
        if left.casefold() == right.casefold():
            self.add_keep(left)
            return Entry(left, left, None)
        if _is_agent_side(left, right, agent_language, customer_language):
            left, right = right, left
        self._drop(left, right)
        self._room()
        # A term in a telling script names its language (订单号 is Chinese whoever the current
        # customer is); otherwise the entry is for the current customer language.
        guess = detect_language(left)
        scope = guess if guess and not same_family(guess, agent_language) else customer_language
        entry = Entry(left, right, scope)
        self.entries.append(entry)
        return entry

    def add_keep(self, term: str) -> str:
        term = _term(term)
        self._drop(term)
        self._room()
        self.keep.append(term)
        return term

    def remove(self, term: str) -> list[str]:
        """Remove every entry with ``term`` on either side; returns what was removed."""
        key = term.strip().casefold()
        removed = [f"{e.customer_term} = {e.agent_term}" for e in self.entries
                   if key in (e.customer_term.casefold(), e.agent_term.casefold())]
        removed += [k for k in self.keep if k.casefold() == key]
        self._drop(term.strip())
        return removed

    def clear(self) -> None:
        self.entries.clear()
        self.keep.clear()

    def _drop(self, *terms: str) -> None:
        keys = {t.casefold() for t in terms}
        self.entries = [e for e in self.entries
                        if not keys & {e.customer_term.casefold(), e.agent_term.casefold()}]
        self.keep = [k for k in self.keep if k.casefold() not in keys]

    def _room(self) -> None:
        if len(self) >= MAX_ENTRIES:
            raise GlossaryError.worded("glossary_full", count=MAX_ENTRIES)

    # --- using it ----------------------------------------------------------------------------

    def replacements(self, direction: Direction, customer_language: str | None) -> dict[str, str]:
        """Source term -> what the translation must say, for one direction (keep terms too)."""
        out = {term: term for term in self.keep}
        for e in self.entries:
            if e.applies(customer_language):
                src, dst = ((e.customer_term, e.agent_term) if direction == "customer->agent"
                            else (e.agent_term, e.customer_term))
                out.setdefault(src, dst)
        return out

    def keep_terms(self) -> dict[str, str]:
        return {term: term for term in self.keep}

    def pairs_in(self, text: str, direction: Direction,
                 customer_language: str | None) -> list[tuple[str, str]]:
        """The (source term, target term) pairs whose source term occurs in ``text``."""
        folded = text.casefold()
        pairs = self.replacements(direction, customer_language).items()
        return [(s, t) for s, t in pairs if s != t and s.casefold() in folded]

    def listing(self) -> Said:
        if not len(self):
            return said("glossary_empty")
        lines = []
        for e in self.entries:
            scope = f" ({e.customer_language})" if e.customer_language else ""
            lines.append(f"• {e.customer_term} = {e.agent_term}{scope}")
        lines += [f"• {k} (—)" for k in self.keep]
        return said("glossary_list", count=len(self), items="\n".join(lines))


def _term(text: str) -> str:
    term = text.strip()
    if len(term) >= 2 and term[0] == term[-1] and term[0] in "\"'“”«»「」":
        term = term[1:-1].strip()
    if len(term) >= 2 and (term[0], term[-1]) in (("“", "”"), ("«", "»"), ("「", "」")):
        term = term[1:-1].strip()
    if not term:
        raise GlossaryError.worded("glossary_term_empty")
    if len(term) > MAX_TERM_CHARS:
        raise GlossaryError.worded("glossary_term_long", count=MAX_TERM_CHARS)
    if "\n" in term:
        raise GlossaryError.worded("glossary_term_lines")
    return term


_FAMILY = {"zh-Hant": "zh", "yue": "zh", "id": "ms"}


def same_family(a: str | None, b: str | None) -> bool:
    """Chinese variants count as one language here, and so do Malay and Indonesian."""
    return a is not None and b is not None and _FAMILY.get(a, a) == _FAMILY.get(b, b)


def _is_agent_side(left: str, right: str, agent: str, customer: str | None) -> bool:
    """True when ``left`` is clearly the agent's term and ``right`` is not."""
    lang_left, lang_right = detect_language(left), detect_language(right)
    if same_family(lang_left, agent) and not same_family(lang_right, agent):
        return True
    return (customer is not None and same_family(lang_right, customer)
            and not same_family(lang_left, customer))


# --------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GlossaryCommand:
    action: Literal["add", "keep", "list", "remove", "clear"]
    term: str = ""
    translation: str = ""


_SEPARATOR = re.compile(r"\s*[=＝]\s*")


def parse_glossary(args: str) -> GlossaryCommand:
    """Parse what follows "/glossary". Raises :class:`GlossaryError` with the usage."""
    verb, _, rest = args.strip().partition(" ")
    verb, rest = verb.casefold(), rest.strip()
    if verb in ("", "list", "ls", "show"):
        return GlossaryCommand("list")
    if verb == "clear":
        return GlossaryCommand("clear")
    if verb in ("remove", "rm", "delete", "del"):
        if not rest:
            raise GlossaryError.worded("glossary_which")
        return GlossaryCommand("remove", rest)
    if verb == "add":
        if not rest:
            raise GlossaryError.worded("glossary_which")
        parts = _SEPARATOR.split(rest)
        if len(parts) == 1:
            return GlossaryCommand("keep", _term(parts[0]))
        if len(parts) > 2:
            raise GlossaryError.worded("glossary_one_equals")
        return GlossaryCommand("add", _term(parts[0]), _term(parts[1]))
    raise GlossaryError.worded("glossary_usage")


def run_glossary(glossary: Glossary, command: GlossaryCommand, *, agent_language: str,
                 customer_language: str | None) -> Said:
    """Apply a parsed command; returns the sentence the UI shows."""
    if command.action == "list":
        return glossary.listing()
    if command.action == "clear":
        count = len(glossary)
        glossary.clear()
        return said("glossary_cleared", count=count) if count else said("glossary_was_empty")
    if command.action == "remove":
        removed = glossary.remove(command.term)
        if not removed:
            return said("glossary_not_in", term=command.term, listing=glossary.listing())
        return said("glossary_removed", terms="; ".join(removed))
    if command.action == "keep":
        term = glossary.add_keep(command.term)
        return said("glossary_kept", term=term)
    entry = glossary.add(command.term, command.translation, agent_language=agent_language,
                         customer_language=customer_language)
    if entry.customer_term == entry.agent_term:
        return said("glossary_kept", term=entry.agent_term)
    if entry.customer_language:
        return said("glossary_added_for", customer=entry.customer_term, agent=entry.agent_term,
                    language=Code(agent_language), customers=Code(entry.customer_language))
    return said("glossary_added", customer=entry.customer_term, agent=entry.agent_term,
                language=Code(agent_language))
