"""DeepL's translate options -> what our engine does with them: pure rules, no IO.

* ``model_type`` (deepl-python ``ModelType``): ``latency_optimized`` is the interactive request
  class (ahead of API and bulk work). ``quality_optimized`` and ``prefer_quality_optimized``
  are the best this server has for the request: Best quality (candidates fused by Chimera)
  where it is configured and no instruction asks for a style, else the model's own answer in
  the API class. Neither is ever refused: DeepL documents that "All features and language
  pairs are compatible with all model_type values" (developers.deepl.com, Translate text,
  "About the model_type parameter"), and clients set to quality (Weblate has the setting)
  would break. The answer names ``model_type_used`` whenever ``model_type`` was sent, as
  DeepL does.
* ``formality``: ``more``/``less`` become the family's official *style* instruction (Hy-MT2:
  "the translation style must strictly conform to [formal]") for the targets DeepL itself offers
  formality for; elsewhere, or with a family that has no style instruction (Hunyuan-MT,
  HY-MT1.5), ``more``/``less`` are refused as DeepL refuses them and ``prefer_*`` fall back to
  the default, as DeepL defines them.
* ``custom_instructions`` (at most 10, 300 characters each, as DeepL documents): the family's
  *personalization* instruction (numbered preferences), with the formality as one more line;
  refused clearly where the family has none.
* ``split_sentences``: ``0``, ``1`` or ``nonewlines``, else 400 as DeepL answers; the engine
  segments by itself either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hymt_chat.engine.families import TONES, Family
from hymt_chat.engine.priority import API, INTERACTIVE
from hymt_chat.errors import InputError
from hymt_chat.lang.languages import get_language

__all__ = ["FORMALITY_TARGETS", "Options", "PromptBuilder", "parse_options", "supports_formality"]

PromptBuilder = Callable[[str, str, str], str]

FORMALITY_TARGETS = frozenset({"de", "fr", "it", "es", "nl", "pl", "pt", "ja", "ru"})
"""Our codes of the targets DeepL offers formality for (its /v2/languages ``supports_formality``:
DE, FR, IT, ES, NL, PL, PT-BR, PT-PT, JA, RU)."""
MODEL_TYPES = ("quality_optimized", "latency_optimized", "prefer_quality_optimized")
SPLIT_SENTENCES = ("0", "1", "nonewlines")
MAX_INSTRUCTIONS = 10
MAX_INSTRUCTION_CHARS = 300
_STYLES = {"more": TONES["formal"], "less": ("非正式、口语化", "informal")}
_PREFERENCE = {"more": ("使用正式的语体", "Use a formal register"),
               "less": ("使用非正式、口语化的语体", "Use an informal, casual register")}


@dataclass(frozen=True, slots=True)
class Options:
    klass: str = API  # the request class of every call
    quality: bool = False  # Best quality (Chimera fusion)
    model_type_used: str | None = None  # named in the answer when model_type was sent
    prompt: PromptBuilder | None = None  # the family's instruction, None: its default prompt

    @property
    def plain(self) -> bool:
        """The default prompt, as any other request: the translation memory applies."""
        return self.prompt is None and not self.quality


def supports_formality(family: Family, target: str) -> bool:
    """What /v2/languages says of *target*: a style instruction and a target DeepL offers it for."""
    return family.supports("style") and target in FORMALITY_TARGETS


def parse_options(*, target: str, family: Family, quality_available: bool,
                  formality: str | None = None, model_type: str | None = None,
                  split_sentences: str | None = None,
                  custom_instructions: Sequence[object] = ()) -> Options:
    """The engine's options for one /v2/translate, or InputError with DeepL's wording."""
    if split_sentences is not None and split_sentences.lower() not in SPLIT_SENTENCES:
        raise InputError(f"Value for 'split_sentences' not supported: {split_sentences!r} "
                         "(0, 1 or nonewlines).")
    level = _formality(formality, target, family)
    instructions = _instructions(custom_instructions, family)
    quality, used, klass = False, None, API
    if model_type is not None:
        kind = model_type.lower()
        if kind not in MODEL_TYPES:
            raise InputError(f"Value for 'model_type' not supported: {model_type!r} "
                             f"({', '.join(MODEL_TYPES)}).")
        if kind == "latency_optimized":
            used, klass = kind, INTERACTIVE
        else:  # an instruction's prompt wins over fusion, which would drop it
            quality = quality_available and not (level or instructions)
            used = "quality_optimized"
    return Options(klass, quality, used, _builder(family, level, instructions))


def _formality(value: str | None, target: str, family: Family) -> str | None:
    """``more``, ``less`` or None (the default prompt)."""
    if value is None:
        return None
    level = value.lower()
    if level == "default":
        return None
    if level not in ("more", "less", "prefer_more", "prefer_less"):
        raise InputError(f"Value for 'formality' not supported: {value!r}.")
    if not supports_formality(family, target):
        if level.startswith("prefer_"):
            return None
        why = ("this target language" if family.supports("style") else
               f"{family.title}, which has no style instruction")
        # DeepL's words first: its suite matches r".*Target language.*formality.*"
        raise InputError(f"Target language does not support formality ({why}); use "
                         "prefer_more or prefer_less to fall back to the default.")
    return level.removeprefix("prefer_")


def _instructions(values: Sequence[object], family: Family) -> list[str]:
    items = [v for v in values if not (isinstance(v, str) and not v.strip())]
    if not items:
        return []
    if not all(isinstance(v, str) for v in items):
        raise InputError("Parameter 'custom_instructions' must be a list of strings.")
    texts = [str(v).strip() for v in items]
    if len(texts) > MAX_INSTRUCTIONS:
        raise InputError(f"At most {MAX_INSTRUCTIONS} custom_instructions per request.")
    if any(len(t) > MAX_INSTRUCTION_CHARS for t in texts):
        raise InputError(f"A custom instruction is at most {MAX_INSTRUCTION_CHARS} characters.")
    if not family.supports("personalization"):
        raise InputError(f"custom_instructions need a model family with instruction prompts "
                         f"(Hy-MT2); this server translates with {family.title}.")
    return texts


def _builder(family: Family, level: str | None,
             instructions: list[str]) -> PromptBuilder | None:
    if instructions:
        def personal(seg: str, src: str, tgt: str) -> str:
            chinese = _chinese(src, tgt)
            prefs = list(instructions)
            if level:
                prefs.append(_PREFERENCE[level][0 if chinese else 1])
            return family.prompt("personalization", text=seg, source=src, target=tgt,
                                 preferences=prefs)
        return personal
    if level:
        style = _STYLES[level]
        assert style is not None  # each level names a tone that has words

        def styled(seg: str, src: str, tgt: str) -> str:
            return family.prompt("style", text=seg, source=src, target=tgt,
                                 style=style[0 if _chinese(src, tgt) else 1])
        return styled
    return None


def _chinese(source: str, target: str) -> bool:
    """The family's Chinese prompt for a Chinese pair, its English one otherwise (as the agent
    mode's tone does)."""
    known = [c for c in (source, target) if c and c != "auto"]
    return any(get_language(c).is_chinese for c in known)
