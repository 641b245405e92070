"""The Support-agent conversation: who wrote a message, and which way it is translated.

The agent sets their own language once; the customer's is learnt from their first message.
Routing rules (:meth:`Conversation.route`), on the text without its protected spans:

1. **Sure** (at least ``SHORT_LETTERS`` letters, detector confidence ``SURE``): a message in the
   agent's language is the agent's reply (translated into the remembered customer language);
   any other language is the customer's (translated into the agent's language) and is
   remembered — a customer who switches language is followed, and the note says so.
2. **Long but unsure** (langdetect scored a Spanish sentence 71 % Portuguese, 29 % Spanish):
   the conversation's two languages are priors — the first of them in the detector's ranking
   (at least ``CANDIDATE_PROB``) decides the side; failing that, a long message that is not
   clearly the agent's language is the customer's, in their remembered language.
3. **Short** ("ok", "merci", "好的", "JD123456789"): detection may not *change* the pair. A hint
   comes only from a closed list of short words per language ("thanks", "gracias", "merci"…)
   or from a non-Latin script (two Han characters are Chinese; a short Latin word is a coin
   toss for langdetect): the agent's language -> the agent's reply; the customer's -> the
   customer's; another language -> the customer's, but their remembered language stays (it is
   set only if none was known yet).
4. **Short, no hint** ("ok", "👍", an order number): the **agent's** reply. Why not "the same
   side as last time" or "the other side": turns do not alternate reliably (a customer sends
   three messages in a row), while this page is the agent's — customer messages arrive here
   pasted, nobody pastes a lone "ok" to have it translated, and the agent types short replies
   that must reach the customer. A wrong guess costs a harmless translation of a universal
   token, and the pair never changes on such a message.

``/customer <language>`` sets the customer language by hand; ``route(text, side=...)`` lets the
UI force a side ("this was the customer") when the rules guess wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from hymt_chat.engine.families import TONES
from hymt_chat.errors import CommandError
from hymt_chat.lang.detect import detect_candidates, detect_with_confidence
from hymt_chat.lang.languages import CODES, find_language, get_language
from hymt_chat.modes.agent.glossary import Entry, Glossary, same_family
from hymt_chat.modes.agent.protect import plain_text
from hymt_chat.modes.wording import unknown_language_message
from hymt_chat.words.said import Code, Said, said

__all__ = [
    "AGENT_TO_CUSTOMER",
    "CUSTOMER_TO_AGENT",
    "Conversation",
    "CustomerLanguageUnknownError",
    "Direction",
    "Route",
    "Side",
    "Turn",
    "build_context",
    "function_word_votes",
    "now",
    "short_word_languages",
]

Direction = Literal["customer->agent", "agent->customer"]
Side = Literal["agent", "customer"]
CUSTOMER_TO_AGENT: Direction = "customer->agent"
AGENT_TO_CUSTOMER: Direction = "agent->customer"

SHORT_LETTERS = 10
"""Under this many letters a message is short: detection may not change the pair."""
SURE = 0.8
"""Detector confidence needed to trust it (Chinese with no telling character scores 0.6)."""
CANDIDATE_PROB = 0.2
"""An unsure detection's runner-up counts when it is one of the conversation's languages."""

# Short words a customer or an agent sends on their own, per language. "ok" is in none: it is
# universal. Words shared by several languages ("no", "si") name all of them.
_SHORT_WORDS: dict[str, str] = {
    "en": "thanks|thank you|thx|ty|yes|yep|sure|hello|hi|hey|bye|great|perfect|cheers|"
          "thanks a lot|got it|no problem|one moment|sorry|please|no",
    "es": "gracias|muchas gracias|hola|vale|sí|si|claro|adiós|adios|perfecto|bueno|de acuerdo|"
          "buenos días|buenas|no",
    "fr": "merci|merci beaucoup|bonjour|salut|oui|non|d'accord|au revoir|parfait|bonsoir|"
          "pardon|super",
    "de": "danke|danke schön|hallo|ja|nein|tschüss|bitte|genau|super|alles klar|gut",
    "it": "grazie|ciao|sì|si|perfetto|prego|buongiorno|va bene|no",
    "pt": "obrigado|obrigada|olá|ola|sim|não|nao|tchau|tudo bem|perfeito|bom dia",
    "nl": "dank je|dank u|bedankt|hoi|hallo|ja|nee|prima|doei",
    "tr": "teşekkürler|teşekkür ederim|merhaba|evet|hayır|tamam|sağol",
    "pl": "dziękuję|dzięki|cześć|tak|nie|dobrze",
    "id": "terima kasih|makasih|halo|ya|tidak|baik",
    "vi": "cảm ơn|cám ơn|xin chào|vâng|dạ|không",
    "tl": "salamat|po|opo|oo|hindi",
}
_SHORT_INDEX: dict[str, list[str]] = {}
for _lang, _words in _SHORT_WORDS.items():
    for _word in _words.split("|"):
        _SHORT_INDEX.setdefault(_word, []).append(_lang)
_NOT_WORDS = re.compile(r"[^\w' ]+")


def short_word_languages(text: str) -> list[str]:
    """Languages whose short-word list has ``text`` ("Merci !" -> ["fr"]); [] when none."""
    key = re.sub(r"\s+", " ", _NOT_WORDS.sub(" ", text.casefold())).strip()
    return list(_SHORT_INDEX.get(key, []))


# The commonest words of a few languages: on 10-30 letters they tell the conversation's two
# languages apart where langdetect's character n-grams cannot.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split()) for code, words in {
        "en": "the a an to of and is are it i you we me my your our let will can be this that "
              "for with in on not do please have has was i'll we'll it's i'm you're",
        "es": "el la los las de que y es en un una por para no se su mi lo le con está muy "
              "pero ya me te usted",
        "fr": "le la les de des et est un une je vous nous il pas pour que qui dans sur avec "
              "mon votre ne ce c'est j'ai",
        "de": "der die das und ist nicht ich sie wir ein eine zu mit den dem ihr ihre mein "
              "bitte auf für es",
        "it": "il la di che e è un una per non sono mi ho con gli le del della ti",
        "pt": "o a os as de que e é um uma não para com meu minha seu sua está em no na você",
        "nl": "de het een en is niet ik je u wij we van voor met op dat dit zijn",
    }.items()
}


def function_word_votes(text: str, language: str) -> int:
    """How many of ``text``'s words are among ``language``'s commonest (0: no list for it)."""
    table = _FUNCTION_WORDS.get(language)
    if not table:
        return 0
    return sum(w in table for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.casefold()))


@dataclass(frozen=True, slots=True)
class Route:
    direction: Direction
    source: str  # table code the message is translated from
    target: str  # table code it is translated into
    note: Said | None = None  # why, when it is worth telling the agent
    detected: str | None = None  # what detection said (None: unsure)
    pair_changed: bool = False  # the banner should be shown again

    @property
    def side(self) -> Side:
        return "customer" if self.direction == CUSTOMER_TO_AGENT else "agent"


@dataclass(frozen=True, slots=True)
class Turn:
    """One line of the transcript."""

    time: datetime
    who: Side
    original: str
    source: str
    translation: str
    target: str
    warnings: tuple[str, ...] = ()
    back_translation: str | None = None
    drift: float | None = None  # similarity of the back-translation to the original (0-1)


class CustomerLanguageUnknownError(CommandError):
    """The agent replied before the customer's language is known."""

    def __init__(self) -> None:
        sentence = said("customer_language_unknown")
        super().__init__(str(sentence))
        self.said = sentence


@dataclass(slots=True)
class Conversation:
    """One agent/customer conversation: the pair, the glossary and the transcript."""

    agent_language: str
    customer_language: str | None = None
    glossary: Glossary = field(default_factory=Glossary)
    transcript: list[Turn] = field(default_factory=list)
    last_direction: Direction | None = None
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    tone: str = "neutral"  # of the agent's replies: TONES (the family's style instruction)

    def __post_init__(self) -> None:
        self.agent_language = get_language(self.agent_language).code
        self.tone = _tone(self.tone)
        if self.customer_language is not None:
            self.customer_language = get_language(self.customer_language).code

    # --- the pair ---------------------------------------------------------------------------

    def banner(self) -> Said:
        """ "Agent: English ⇄ Customer: Spanish"."""
        if self.customer_language is None:
            return said("banner_unknown", agent=Code(self.agent_language))
        return said("banner", agent=Code(self.agent_language),
                    customer=Code(self.customer_language))

    def set_customer_language(self, name: str) -> Said:
        """``/customer <language>``; returns the sentence to show. Unknown names raise."""
        self.customer_language = _other_side(name, self.agent_language, _AGENTS_OWN)
        return said("customer_set", banner=self.banner())

    def set_agent_language(self, name: str) -> Said:
        """``/agent <language>`` or the settings picker; returns the sentence to show."""
        self.agent_language = _other_side(name, self.customer_language, _CUSTOMERS)
        return said("agent_set", banner=self.banner())

    def set_tone(self, name: str) -> Said:
        """``/tone formal|friendly|neutral`` or the settings picker; the sentence to show."""
        self.tone = _tone(name)
        return said(f"tone_{self.tone}_set")

    # --- routing ----------------------------------------------------------------------------

    def route(self, text: str, side: Side | None = None) -> Route:
        """Decide who wrote ``text`` and the translation's direction (see the module doc).

        Remembers the customer's language as soon as it is seen (even if the translation then
        fails: a retry routes the same way). Raises :class:`CustomerLanguageUnknownError` for an
        agent message before the customer language is known.
        """
        probe = plain_text(text, self.glossary.keep_terms())
        detected, confidence = detect_with_confidence(probe)
        letters = sum(ch.isalpha() for ch in probe)
        before = self.customer_language
        if side is not None:
            route = self._forced(side, detected)
        elif letters < SHORT_LETTERS:
            route = self._short(probe, detected)
        elif detected and confidence >= SURE:
            route = self._sure(detected)
        else:
            route = self._unclear(probe, detected)
        self.last_direction = route.direction
        if self.customer_language != before:
            route = replace(route, pair_changed=True)
        return route

    def _customer(self, source: str, detected: str | None, note: Said | None = None) -> Route:
        return Route(CUSTOMER_TO_AGENT, source, self.agent_language, note, detected)

    def _agent(self, detected: str | None, note: Said | None = None) -> Route:
        if self.customer_language is None:
            raise CustomerLanguageUnknownError()
        return Route(AGENT_TO_CUSTOMER, self.agent_language, self.customer_language, note,
                     detected)

    def _forced(self, side: Side, detected: str | None) -> Route:
        if side == "agent":
            return self._agent(detected)
        source = detected if detected and detected != self.agent_language else None
        source = source or self.customer_language
        if source is None:
            raise CustomerLanguageUnknownError()
        return self._customer(source, detected)

    def _sure(self, detected: str) -> Route:
        if detected == self.agent_language:
            return self._agent(detected)
        previous = self.customer_language
        self.customer_language = detected
        if previous is None:
            note = said("customer_writes", language=Code(detected))
        elif previous != detected:
            note = said("customer_now_writes", language=Code(detected),
                        previous=Code(previous))
        else:
            note = None
        return self._customer(detected, detected, note)

    def _short(self, probe: str, detected: str | None) -> Route:
        hints = short_word_languages(probe)
        if detected and not hints and _script_is_telling(detected):
            hints = [detected]
        if any(same_family(h, self.agent_language) for h in hints):
            return self._agent(detected)
        customer = self.customer_language
        if customer is not None and any(same_family(h, customer) for h in hints):
            return self._customer(customer, detected)
        if hints:
            hint = hints[0]
            if customer is None:
                self.customer_language = hint
                return self._customer(hint, detected,
                                      said("customer_writes_short", language=Code(hint)))
            return self._customer(hint, detected, said("short_as_customer", language=Code(hint),
                                                       customer=Code(customer)))
        if customer is None:
            raise CustomerLanguageUnknownError()
        return self._agent(detected, said("short_as_reply"))

    def _unclear(self, probe: str, detected: str | None) -> Route:
        """A long message the detector is unsure about (Spanish scored 71 % Portuguese).

        The two languages of the conversation are priors: whichever of them the detector
        ranks higher (at least ``CANDIDATE_PROB``) wins; otherwise a long message that is not
        clearly the agent's language is the customer's, in their remembered language.
        """
        ranked = [(code, 1.0) for code in short_word_languages(probe)]
        ranked += _ranked(probe) or ([(detected, 1.0)] if detected else [])
        customer = self.customer_language
        for code, _prob in ranked:
            if same_family(code, self.agent_language):
                return self._agent(detected)
            if customer is not None and same_family(code, customer):
                return self._customer(customer, detected)
        # langdetect ranked "Let me check it." French then German: common words settle it.
        agent_votes = function_word_votes(probe, self.agent_language)
        customer_votes = function_word_votes(probe, customer) if customer else 0
        if agent_votes >= 2 and agent_votes > customer_votes:
            return self._agent(detected)
        if customer is not None and customer_votes >= 2 and customer_votes > agent_votes:
            return self._customer(customer, detected)
        if customer is not None:
            return self._customer(customer, detected,
                                  said("unclear_as_customer", language=Code(customer)))
        guess = ranked[0][0] if ranked and ranked[0][0] in CODES else None
        if guess is None:
            raise CommandError.worded("message_language_unknown")
        self.customer_language = guess
        return self._customer(guess, detected, said("customer_seems", language=Code(guess)))

    # --- transcript -------------------------------------------------------------------------

    def add_turn(self, turn: Turn) -> None:
        self.transcript.append(turn)

    def drop_turn(self, turn: Turn) -> None:
        """Take *turn* out of the transcript (a held reply the agent writes again)."""
        self.transcript[:] = [t for t in self.transcript if t is not turn]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state, for resuming after a reload (Chainlit thread metadata)."""
        return {
            "version": 1,
            "agent_language": self.agent_language,
            "customer_language": self.customer_language,
            "started": self.started.isoformat(),
            "last_direction": self.last_direction,
            "tone": self.tone,
            "glossary": {"entries": [asdict(e) for e in self.glossary.entries],
                         "keep": list(self.glossary.keep)},
            "transcript": [{**asdict(t), "time": t.time.isoformat(),
                            "warnings": list(t.warnings)} for t in self.transcript],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Conversation:
        """The inverse of :meth:`to_dict`."""
        glossary = Glossary([Entry(**e) for e in data.get("glossary", {}).get("entries", [])],
                            list(data.get("glossary", {}).get("keep", [])))
        turns = [Turn(**{**t, "time": datetime.fromisoformat(t["time"]),
                         "warnings": tuple(t.get("warnings", ()))})
                 for t in data.get("transcript", [])]
        return cls(data["agent_language"], data.get("customer_language"), glossary, turns,
                   data.get("last_direction"), datetime.fromisoformat(data["started"]),
                   data.get("tone") or "neutral")

    def clear(self) -> None:
        """Forget the customer, the transcript and the glossary (a new customer)."""
        self.customer_language = None
        self.transcript.clear()
        self.glossary.clear()
        self.last_direction = None


_LATIN_CODES = frozenset("en fr pt es tr it de vi ms id tl pl cs nl".split())


def _tone(name: str) -> str:
    """A tone by name (case-insensitive); CommandError listing the three otherwise."""
    key = (name or "").strip().lower()
    if key not in TONES:
        raise CommandError.worded("unknown_tone", name=name.strip())
    return key


def _ranked(text: str) -> list[tuple[str, float]]:
    """langdetect's ranking of the candidates (``detect_language`` keeps only a sure winner)."""
    return detect_candidates(text, CANDIDATE_PROB)


def _script_is_telling(detected: str) -> bool:
    """A short message's detection is a hint only when its script is not Latin: two characters
    decide Han, Hangul or Thai, while langdetect on a short Latin word is a coin toss."""
    return detected not in _LATIN_CODES


def build_context(turns: Sequence[Turn], language: str, *, max_turns: int = 4,
                  max_chars: int = 800) -> str:
    """The last turns as "Customer: …" / "Agent: …" lines, for the context template.

    Each turn is given in ``language`` (the language of the message being translated) when
    the turn has a side in it — the model then reads one language — else as written. The
    newest turns are kept first; the oldest kept one is cut from its start to fit.
    """
    lines: list[str] = []
    room = max_chars
    for turn in reversed(turns[-max_turns:] if max_turns > 0 else []):
        text = turn.translation if turn.target == language and turn.source != language \
            else turn.original
        line = f"{turn.who.capitalize()}: {' '.join(text.split())}"
        if len(line) > room:
            if room > 40:
                lines.append("…" + line[len(line) - room + 1:])
            break
        lines.append(line)
        room -= len(line) + 1
    return "\n".join(reversed(lines))


_AGENTS_OWN = "agents_own"  # the refusals' message keys
_CUSTOMERS = "customers_own"


def _other_side(name: str, taken: str | None, refusal: str) -> str:
    """The code of *name* for one side; CommandError (*refusal*) when it is the other side's
    language *taken*: both sides in one language leaves nothing to translate."""
    code = _code(name)
    if code == taken:
        raise CommandError.worded(refusal, language=Code(code))
    return code


def _code(name: str) -> str:
    lang = find_language(name) if name.strip() else None
    if lang is None:
        raise unknown_language_message(name)
    return lang.code


def now() -> datetime:
    """Timestamps of turns: timezone-aware UTC (shown as ISO 8601 in exports)."""
    return datetime.now(UTC)
