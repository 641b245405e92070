"""The Support-agent mode's one entry point: a message in, a routed and checked translation out.

:func:`handle_agent_message` does route -> mask -> translate (official, terminology or context
template) -> unmask -> checks -> optional back-translation -> transcript. Commands
(``/customer``, ``/agent``, ``/glossary``, ``/transcript``, ``/tone``) go through :func:`parse_agent_command`
and :func:`run_agent_command`; :func:`turn_markdown` renders a turn for the chat. Nothing here
imports Chainlit.

Decisions, measured on the demo model (benchmarks/agent_measure.py):

* **Glossary enforcement: masking by default, the terminology template on request.** 8
  sentences x 3 samples (zh->en, es->en, en->es, en->fr) whose glossary term the model does not
  produce unprompted ("订单号 = order ID", "paquete = parcel", "parcel = envío",
  "receipt = ticket de caisse"): the agreed term appeared in 0/24 answers with the official
  prompt, 6/24 with the terminology template (all six zh->en; 0/18 for the other pairs, and 2
  answers came back in Chinese: its Chinese instruction pulls the small model into Chinese),
  16/24 with the term masked as a protected span restored as its replacement — and in the 8
  others the placeholder was dropped, which unmask reports ("The translation lost 'order ID'").
  So ``glossary_template`` defaults to False; an operator serving Hunyuan-MT-7B (whose successor
  was trained on that template) can turn it on, and a term the answer then lacks is reported.
  HY-MT1.5 and Hy-MT2 publish a terminology instruction: with them it is always used, and a
  term the answer lacks sends the message again with the term masked (see :func:`_translate`).
* **The check before sending is the verdict's** (:mod:`hymt_chat.text.verdict`), on both
  directions: the message is translated back (a CHECK-class call) and the back-translation
  compared for meaning (negation, opposites, names, omissions, additions) and numbers. A
  bare similarity threshold (0.4 here before) held 2 of 12 correct replies and let 7 of 12
  wrong ones through; ``benchmarks/meaning.py`` measures the verdict on a labelled set.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hymt_chat.engine.families import TONES, Family
from hymt_chat.engine.priority import CHECK, INTERACTIVE
from hymt_chat.engine.prompts import build_context_prompt, build_terminology_prompt
from hymt_chat.errors import (
    CommandError,
    EmptyTextError,
    HymtError,
    InputError,
    InputTooLongError,
    short_reason,
)
from hymt_chat.lang.detect import detect_language
from hymt_chat.lang.languages import get_language
from hymt_chat.modes.agent.conversation import (
    AGENT_TO_CUSTOMER,
    CUSTOMER_TO_AGENT,
    Conversation,
    Route,
    Side,
    Turn,
    build_context,
    now,
)
from hymt_chat.modes.agent.drift import DRIFT_THRESHOLD, Drift
from hymt_chat.modes.agent.glossary import (
    GlossaryCommand,
    parse_glossary,
    run_glossary,
    same_family,
)
from hymt_chat.modes.agent.protect import Masked, Unmasked, mask, strip_tokens, unmask
from hymt_chat.modes.agent.transcript import Export, export_files
from hymt_chat.modes.commands import split_command
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.warnings import warnings_markdown
from hymt_chat.modes.wording import escape_markdown, format_duration, literal_block, memory_note
from hymt_chat.text.checks import Finding
from hymt_chat.text.cleanup import clean_text, is_blank
from hymt_chat.text.meaning import missing_numbers
from hymt_chat.text.verdict import Verdict, judged, unchecked
from hymt_chat.words.said import Code, Said, said

if TYPE_CHECKING:
    from hymt_chat.engine.policy import EventSink
    from hymt_chat.engine.translator import ProgressSink, Translator
    from hymt_chat.settings import Settings

__all__ = [
    "AGENT_COMMANDS",
    "AgentCommand",
    "AgentOptions",
    "AgentTurn",
    "CommandReply",
    "handle_agent_message",
    "is_universal",
    "parse_agent_command",
    "run_agent_command",
    "tone_reply",
    "turn_markdown",
]

_ENGLISH_PAGE = PageText()

GLOSSARY_TEMPLATE_DEFAULT = False
"""Glossary terms are masked with their replacement unless the terminology template is asked
for (setting ``glossary_template``): see the measurement above."""


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """Operator settings of the mode: ``Settings`` fields when they exist, else these defaults.

    ``back_translate`` and ``use_context`` are the initial values of the UI's two switches;
    the switches' current values are passed to :func:`handle_agent_message` per message.
    """

    glossary_template: bool = GLOSSARY_TEMPLATE_DEFAULT  # HYMT_GLOSSARY_TEMPLATE
    context_turns: int = 4  # HYMT_AGENT_CONTEXT_TURNS
    context_chars: int = 800  # HYMT_AGENT_CONTEXT_CHARS
    drift_threshold: float = DRIFT_THRESHOLD  # HYMT_AGENT_DRIFT_THRESHOLD
    back_translate: bool = True  # HYMT_AGENT_BACK_TRANSLATE
    use_context: bool = False  # HYMT_AGENT_CONTEXT

    @classmethod
    def from_settings(cls, settings: Settings | None) -> AgentOptions:
        defaults = cls()

        def get(name: str, default: Any) -> Any:
            value = getattr(settings, name, None) if settings is not None else None
            return default if value is None else value

        return cls(
            glossary_template=bool(get("glossary_template", defaults.glossary_template)),
            context_turns=int(get("agent_context_turns", defaults.context_turns)),
            context_chars=int(get("agent_context_chars", defaults.context_chars)),
            drift_threshold=float(get("agent_drift_threshold", defaults.drift_threshold)),
            back_translate=bool(get("agent_back_translate", defaults.back_translate)),
            use_context=bool(get("agent_context", defaults.use_context)),
        )


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """What the UI shows for one message: the route, the transcript turn, the checks."""

    route: Route
    turn: Turn
    back: Drift | None = None  # None: no back-translation was asked (or not an agent reply)
    seconds: float = 0.0
    model_calls: int = 0
    # "official", "terminology", "terminology, then masking", "context", "style", "none"
    template: str = "official"
    # Origins of the segments the translation memory answered (machine, imported, corrected)
    remembered: tuple[str, ...] = ()
    parts: int = 1  # segments of the message (sent to the model or answered from the memory)
    sent: Masked | None = None  # what the translator was given (spans masked): a correction's key
    verdict: Verdict = field(default_factory=Verdict)  # hold it, or let it go (and why)

    @property
    def translation(self) -> str:
        return self.turn.translation

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.turn.warnings


@dataclass(frozen=True, slots=True)
class _Output:
    text: str
    findings: tuple[Finding, ...] = ()
    calls: int = 0
    template: str = "official"
    remembered: tuple[str, ...] = ()
    sent: Masked | None = None


async def handle_agent_message(
    conv: Conversation,
    text: str,
    translator: Translator,
    settings: Settings | AgentOptions | None = None,
    *,
    back_translate: bool = False,
    use_context: bool = False,
    side: Side | None = None,
    user: str = "default",
    on_progress: ProgressSink | None = None,
    on_event: EventSink | None = None,
) -> AgentTurn:
    """Route, translate and check one message, and append it to the transcript.

    ``back_translate``: the message is translated back and the verdict compares the two, in
    both directions (the agent's reply before it goes out, the customer's message before the
    agent relies on it). ``side`` forces who wrote it. Raises what the Translator raises, plus
    :class:`~hymt_chat.modes.agent.conversation.CustomerLanguageUnknownError`; on any error the
    transcript is unchanged. A back-translation that fails does not: the turn is held as not
    checked, with the reason.
    """
    options = settings if isinstance(settings, AgentOptions) else AgentOptions.from_settings(
        settings or translator.settings)
    started = time.monotonic()
    text = clean_text(text)
    if is_blank(text):
        raise EmptyTextError.worded("empty_message")
    limit = translator.settings.max_input_chars
    if len(text) > limit:
        raise InputTooLongError(len(text), limit)
    route = conv.route(text, side)
    out = await _translate(conv, text, route, translator, options, use_context=use_context,
                           user=user, on_progress=on_progress, on_event=on_event)
    back_text: str | None = None
    calls = out.calls
    verdict: Verdict | None = None
    # A reply answered from the memory is still checked before it goes out; a customer's
    # message answered wholly from it is not asked of the model again (it passed the checks
    # when stored, or a person wrote it).
    replying = route.direction == AGENT_TO_CUSTOMER
    if back_translate and (out.calls or (out.remembered and replying)):
        direction = (CUSTOMER_TO_AGENT if route.direction == AGENT_TO_CUSTOMER
                     else AGENT_TO_CUSTOMER)
        try:
            back_out = await _translate(conv, out.text, Route(direction, route.target,
                                                              route.source),
                                        translator, options, use_context=False, user=user,
                                        on_event=on_event, klass=CHECK)
        except InputError:
            raise
        except HymtError as err:  # the check's own call failed: held, never blocked
            verdict = unchecked(f"the back-translation failed: {short_reason(err)}",
                                out.findings)
        else:
            calls += back_out.calls
            back_text = back_out.text
    if verdict is None:
        spans = [s.restore for s in mask(text, conv.glossary.keep_terms()).spans]
        verdict = await judged(text, out.text, route.source, route.target, back=back_text,
                               findings=out.findings, spans=spans,
                               floor=options.drift_threshold)
    back = (Drift(verdict.score if verdict.score is not None else 1.0, verdict.hold,
                  list(verdict.messages)) if back_text is not None else None)
    turn = Turn(now(), route.side, text, route.source, out.text, route.target,
                verdict.messages, back_text, back.score if back else None)
    conv.add_turn(turn)
    return AgentTurn(route, turn, back, time.monotonic() - started, calls, out.template,
                     out.remembered, max(1, out.calls + len(out.remembered)), out.sent,
                     verdict)


async def _translate(
    conv: Conversation,
    text: str,
    route: Route,
    translator: Translator,
    options: AgentOptions,
    *,
    use_context: bool,
    user: str,
    on_progress: ProgressSink | None = None,
    on_event: EventSink | None = None,
    klass: str = INTERACTIVE,
    force_mask: bool = False,
) -> _Output:
    """One direction: mask, pick the instruction, translate, unmask, check spans and numbers.

    The instruction is the family's own where it publishes one (:func:`_instruction`); with
    the family's terminology instruction a glossary term the answer lacks sends the message
    again with the term masked (``force_mask``), which is also the check that the term arrived.
    """
    family = translator.family
    customer = conv.customer_language
    official_terms = family.supports("terminology") and not force_mask
    pairs: list[tuple[str, str]] = []
    if official_terms or (options.glossary_template and not force_mask):
        pairs = conv.glossary.pairs_in(text, route.direction, customer)
        terms = conv.glossary.keep_terms()
    else:
        terms = conv.glossary.replacements(route.direction, customer)
    masked = mask(text, terms)
    if masked.only_spans or is_universal(strip_tokens(masked.text)):
        # "JD123456789", a URL, "ok", "👍": the same in every language. Not sent: the demo
        # model answered "ok" with "¡Claro! ¿Cómo puedo ayudarte hoy?".
        restored = unmask(masked.text, masked)
        return _Output(restored.text, (), 0, "none")

    tone = conv.tone if route.direction == AGENT_TO_CUSTOMER and klass != CHECK else "neutral"
    if not family.supports("style"):
        tone = "neutral"  # the /tone reply said so; the context may still go
    context = ""
    if use_context and not pairs and tone == "neutral":
        context = build_context(conv.transcript, route.source, max_turns=options.context_turns,
                                max_chars=options.context_chars)
    template, builder = _instruction(family, pairs, tone, context)
    result = await translator.translate(
        masked.text, route.target, route.source, user=user, on_progress=on_progress,
        on_event=on_event, klass=klass, prompt=builder)
    restored = unmask(result.text, masked)
    if official_terms and pairs and _lacks_terms(restored.text, pairs):
        # The family's terminology instruction did not carry a term: masking does (and its
        # restore step reports a placeholder the model dropped).
        again = await _translate(conv, text, route, translator, options, use_context=False,
                                 user=user, on_progress=on_progress, on_event=on_event,
                                 klass=klass, force_mask=True)
        return _Output(again.text, again.findings, result.segments + again.calls,
                       "terminology, then masking", again.remembered, again.sent)
    # The translator's own checks (values, language, leftovers…) come first; the mode's
    # number and language checks are skipped where they would say the same again.
    covered = {f.kind for f in result.warnings}
    own = _checks(masked, result.text, restored, pairs, route.target, covered,
                  answers=translator.settings.checks)
    return _Output(restored.text,
                   tuple(result.warnings) + tuple(Finding("agent", str(line), said=line if isinstance(line, Said) else None)
                         for line in own),
                   result.segments, template, result.remembered, masked)


def _lacks_terms(text: str, pairs: list[tuple[str, str]]) -> bool:
    folded = text.casefold()
    return any(target.casefold() not in folded for _source, target in pairs)


Builder = Callable[[str, str, str], str]


def _instruction(family: Family, pairs: list[tuple[str, str]], tone: str,
                 context: str) -> tuple[str, Builder | None]:
    """Which instruction a message goes with, and its prompt builder (None: the default).

    One instruction per message, as the official templates are: the glossary first (the
    agreed terms are a correctness matter), then the agent's tone (their explicit choice),
    then the conversation's context. A family without one of them falls back to today's
    behaviour: Hunyuan-MT-7B's unofficial terminology/context templates (HY-MT1.5's), and no
    tone (the /tone reply says so).
    """
    if pairs:
        if family.supports("terminology"):
            return "terminology", lambda seg, src, tgt: family.prompt(
                "terminology", text=seg, source=src, target=tgt, terms=pairs)
        return "terminology", lambda seg, _src, tgt: build_terminology_prompt(seg, tgt, pairs)
    style = TONES.get(tone)
    if style is not None and family.supports("style"):
        def styled(seg: str, src: str, tgt: str) -> str:
            chinese = get_language(src).is_chinese or get_language(tgt).is_chinese
            return family.prompt("style", text=seg, source=src, target=tgt,
                                 style=style[0] if chinese else style[1])
        return "style", styled
    if context:
        if family.supports("context"):
            return "context", lambda seg, src, tgt: family.prompt(
                "context", text=seg, source=src, target=tgt, context=context)
        return "context", lambda seg, _src, tgt: build_context_prompt(seg, tgt, context)
    return "official", None


_UNIVERSAL = frozenset({"ok", "okay", "okey", "okie", "k", "kk", "ok ok", "okk"})


def is_universal(text: str) -> bool:
    """Written the same in every language: no letters at all (emoji, "?!", "42"), or "ok"."""
    words = " ".join(re.findall(r"[^\W\d_]+", text.casefold()))
    return not words or words in _UNIVERSAL


_VALUE_KINDS = frozenset({"number", "amount", "date", "time", "duration", "percent"})


def _checks(masked: Masked, raw: str, restored: Unmasked, pairs: list[tuple[str, str]],
            target: str, covered: set[str] | frozenset[str] = frozenset(), *,
            answers: bool = True) -> list[Said | str]:
    """Spans (exact), numbers outside spans, glossary terms (template mode), output language;
    the numbers and the language only where the translator's checks (*covered*) said nothing,
    and only with the answer checks on (*answers*: ``HYMT_CHECKS``, which covers values and
    language). The spans and the glossary are the agent's own: always checked."""
    warnings: list[Said | str] = list(restored.warnings)
    lost = missing_numbers(strip_tokens(masked.text), strip_tokens(raw))
    if lost and answers and not covered & _VALUE_KINDS:
        warnings.append(said("numbers_missing", numbers=", ".join(lost)))
    for source_term, target_term in pairs:
        if target_term.casefold() not in restored.text.casefold():
            warnings.append(said("glossary_unused", source=source_term, target=target_term))
    # The terminology and context templates are Chinese instructions: the demo model answered
    # 2 of 24 en->es/fr requests in Chinese. Any model can answer instead of translating.
    written_in = detect_language(strip_tokens(raw)) if answers else None
    if written_in is not None and not same_family(written_in, target) and (
            "language" not in covered):
        warnings.append(said("looks_like", language=Code(written_in), target=Code(target)))
    return warnings


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------

# id, description, lucide icon: what the composer's command menu shows in this mode.
AGENT_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("customer", "Set the customer's language: /customer Spanish", "user"),
    ("agent", "Set your own language: /agent English", "headset"),
    ("glossary", "Glossary: /glossary add 订单号 = order number · add JD-Express · list · "
                 "remove <term> · clear", "book-a"),
    ("transcript", "Download this conversation as CSV and Markdown", "download"),
    ("room", "A room the customer joins from their own phone: /room · /room close · "
             "/room guests 2", "qr-code"),
    ("tone", "Tone of your replies: /tone formal · friendly · neutral", "sparkles"),
    ("desk", "The support desk: /desk (the inbox) · /desk take 3 · /desk 3 · /desk close · "
             "/desk block", "inbox"),
)
_IDS = frozenset(c[0] for c in AGENT_COMMANDS)


@dataclass(frozen=True, slots=True)
class AgentCommand:
    name: str  # one of AGENT_COMMANDS' ids
    argument: str = ""
    glossary: GlossaryCommand | None = None


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: Said | str  # said in the page's language (escape it for Markdown)
    files: list[Export] = field(default_factory=list)
    banner_changed: bool = False


def parse_agent_command(text: str, command: str | None = None) -> AgentCommand | None:
    """The command in a message, or None when it is a message to translate.

    ``command`` is what the composer's menu selected (``text`` is then its argument). Raises
    :class:`~hymt_chat.modes.agent.glossary.GlossaryError` for a malformed /glossary.
    """
    found = split_command(text, command, _IDS)
    if found is None:
        return None
    name, rest = found
    if name == "glossary":
        return AgentCommand(name, rest, parse_glossary(rest))
    return AgentCommand(name, rest)


def run_agent_command(conv: Conversation, command: AgentCommand,
                      family: Family | None = None,
                      page: PageText = _ENGLISH_PAGE) -> CommandReply:
    """Carry a command out; the reply says what changed. Raises CommandError subclasses and
    UnknownLanguageError with a sentence for the user. *family* (the translator's) lets
    /tone say when the model has no style instruction; the transcript is in *page*'s words."""
    if command.name == "tone":
        if not command.argument:
            return CommandReply(said(f"tone_{conv.tone}_set"))
        return CommandReply(tone_reply(conv, command.argument, family))
    if command.name == "customer":
        if not command.argument:
            return CommandReply(said("set_customer_how", banner=conv.banner()))
        return CommandReply(conv.set_customer_language(command.argument), banner_changed=True)
    if command.name == "agent":
        if not command.argument:
            return CommandReply(said("set_agent_how", banner=conv.banner()))
        return CommandReply(conv.set_agent_language(command.argument), banner_changed=True)
    if command.name == "glossary" and command.glossary is not None:
        return CommandReply(run_glossary(conv.glossary, command.glossary,
                                         agent_language=conv.agent_language,
                                         customer_language=conv.customer_language))
    if command.name == "transcript":
        if not conv.transcript:
            return CommandReply(said("transcript_empty"))
        return CommandReply(said("transcript_ready", count=len(conv.transcript)),
                            export_files(conv, page=page))
    raise CommandError.worded("unknown_command", name=command.name)


def tone_reply(conv: Conversation, name: str, family: Family | None = None) -> Said:
    """Set the tone (the /tone command and the settings picker) and say what it does with
    *family*: the style instruction is Hy-MT2's; other families translate without it."""
    reply = conv.set_tone(name)
    if conv.tone != "neutral" and family is not None and not family.supports("style"):
        return said("tone_not_applied", said=reply, family=family.title)
    return reply


# --------------------------------------------------------------------------------------------
# What the chat shows
# --------------------------------------------------------------------------------------------


def turn_meta(result: AgentTurn, *, demo: bool = False, delivery: str | None = None,
              page: PageText = _ENGLISH_PAGE) -> str:
    """ "Customer · Spanish → English · 1.2 s" (+ template, demo mark, where it went)."""
    turn = result.turn
    who = page["who_customer" if turn.who == "customer" else "who_reply"]
    parts = [who, f"{page.name_of(turn.source)} → {page.name_of(turn.target)}",
             format_duration(result.seconds, page)]
    if result.template not in ("official", "none"):
        parts.append(page.fill("template_used", template=result.template))
    note = memory_note(result.remembered, result.parts, page)
    if note:
        parts.append(note)
    if demo:
        parts.append(page["demo_model"])
    if delivery:
        parts.append(delivery)
    return " · ".join(parts)


def turn_markdown(result: AgentTurn, *, demo: bool = False, delivery: str | None = None,
                  page: PageText = _ENGLISH_PAGE) -> str:
    """The translation verbatim, then the back-translation (of the agent's own reply: the
    customer's is in the customer's language), the notes and the warnings; *delivery* says
    where the reply went."""
    meta = escape_markdown(turn_meta(result, demo=demo, delivery=delivery, page=page))
    parts = [literal_block(result.translation), f"*{meta}*"]
    if result.turn.back_translation is not None and result.turn.who == "agent":
        label = page.fill("back_translation_into",
                          language=page.name_of(result.turn.source, in_text=True))
        parts += [f"**{escape_markdown(label)}**", literal_block(result.turn.back_translation)]
    if result.route.note:
        parts.append(f"*{escape_markdown(page.say(result.route.note))}*")
    if result.warnings:
        parts.append(warnings_markdown(result.warnings, page))
    return "\n\n".join(parts)
