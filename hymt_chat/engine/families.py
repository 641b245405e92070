"""The model families hymt-chat serves, in one table: their official prompts, sampling, context.

Tencent published three families with the same 38 languages and no system prompt; each has its
own official templates (copied here character for character) and its own recommended sampling:

* ``hunyuan-mt`` — Hunyuan-MT-7B (Tencent-Hunyuan/Hunyuan-MT README, "Prompts"): the default
  ZH and XX templates only (and Chimera, in :mod:`hymt_chat.engine.prompts`).
* ``hy-mt1.5`` — HY-MT1.5-1.8B/-7B (Tencent-Hunyuan/HY-MT README, "Prompts"): default ZH and XX,
  terminology, context, formatted (all but the XX default exist in Chinese only).
* ``hy-mt2`` — Hy-MT2-1.8B/-7B/-30B-A3B (Tencent-Hunyuan/Hy-MT2 README, "Translation Task
  Instruction Examples"): every instruction in Chinese and English.

How the Hy-MT2 table was read: its bold, italics and code backticks are Markdown presentation
and are left out, and with them the spaces Markdown needs around a code span inside Chinese text
(``翻译为 `{target_lang}`，`` is ``翻译为{target_lang}，``: HY-MT1.5's plain-text README writes
the identical default template without them); spaces that are part of the text stay
(``X 翻译成 Y``, ``键名 (Key)``). ``<br>`` is a newline. Placeholders are filled in one pass, so a
text containing ``{target_lang}`` or a template's literal ``{{var}}`` is never touched.

The family in force (:func:`family_in_force`) is ``HYMT_MODEL_FAMILY`` when it names one, else
the one the served model's name says (``/v1/models``, noted by the readiness probe and the
client through :func:`note_served_model`), else the configured model path's, else
``hunyuan-mt``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hymt_chat.errors import UnsupportedPromptError
from hymt_chat.lang.languages import get_language

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = [
    "FAMILIES",
    "KINDS",
    "TONES",
    "Family",
    "Sampling",
    "UnsupportedPromptError",
    "detect_family",
    "family_in_force",
    "get_family",
    "note_served_model",
    "served_model",
]

KINDS = ("default", "terminology", "context", "style", "personalization", "delimiters",
         "structured", "formatted")
"""Every instruction kind any family publishes (each family has a subset)."""


@dataclass(frozen=True, slots=True)
class Sampling:
    """Recommended sampling of one model size; ``max_tokens`` is a cap (None: none published).

    ``top_k`` and ``repetition_penalty`` are not OpenAI fields: the client sends them in
    ``extra_body`` (vLLM reads them there). ``top_k=-1`` is vLLM's "no top-k".
    """

    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float
    max_tokens: int | None = None

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"temperature": self.temperature, "top_p": self.top_p,
                                       "top_k": self.top_k,
                                       "repetition_penalty": self.repetition_penalty}
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        return out


# Hunyuan-MT README, HY-MT README and Hy-MT2 README (1.8B and 7B): the same four values.
_CLASSIC = Sampling(temperature=0.7, top_p=0.6, top_k=20, repetition_penalty=1.05)
# Hy-MT2 README: "For 1.8B and 7B ... max_tokens 4096"; "For 30B-A3B": no top-k, no penalty.
_MT2_DENSE = Sampling(0.7, 0.6, 20, 1.05, max_tokens=4096)
_MT2_MOE = Sampling(0.7, 1.0, -1, 1.0, max_tokens=4096)


@dataclass(frozen=True, slots=True)
class Template:
    """One instruction in Chinese and/or English, with the official placeholder names.

    ``line`` formats one item of a list field (terms, preferences) with the official wording;
    the items are joined by newlines into the ``list_field`` placeholder.
    """

    zh: str | None
    en: str | None
    target_field: str = "target_lang"
    line_zh: str = ""
    line_en: str = ""
    numbered_from: int = 0  # personalization: the user's preferences are numbered 1, 2, ...


# --- Hunyuan-MT-7B --------------------------------------------------------------------------
_HUNYUAN_MT: dict[str, Template] = {
    "default": Template(
        "把下面的文本翻译成{target_language}，不要额外解释。\n\n{source_text}",
        "Translate the following segment into {target_language}, without additional "
        "explanation.\n\n{source_text}",
        target_field="target_language"),
}

# --- HY-MT1.5 (README "Prompts"; every template but the XX default is Chinese only) ----------
_HY_MT15: dict[str, Template] = {
    "default": Template(
        "将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释：\n\n"
        "{source_text}",
        "Translate the following segment into {target_language}, without additional "
        "explanation.\n\n{source_text}",
        target_field="target_language"),
    "terminology": Template(
        "参考下面的翻译：\n{terms}\n\n将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，"
        "不要额外解释：\n{source_text}",
        None, target_field="target_language", line_zh="{source_term} 翻译成 {target_term}"),
    "context": Template(
        "{context}\n参考上面的信息，把下面的文本翻译成{target_language}，注意不需要翻译上文，也不要额外"
        "解释：\n{source_text}\n",
        None, target_field="target_language"),
    # The official text fixes the target to Chinese: offered only into Chinese.
    "formatted": Template(
        "将以下<source></source>之间的文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释，原文中的"
        "<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。输出格式为："
        "<target>str</target>\n\n<source>{src_text_with_format}</source>",
        None, target_field=""),
}

# --- Hy-MT2 (README table, Chinese and English columns) ---------------------------------------
_HY_MT2: dict[str, Template] = {
    "default": Template(
        "将以下文本翻译为{target_lang}，注意只需要输出翻译后的结果，不要额外解释：\n\n{source_text}",
        "Translate the following text into {target_lang}. Note that you should only output the "
        "translated result without any additional explanation:\n\n{source_text}"),
    "terminology": Template(
        "参考下面的翻译：\n{terms}\n将以下文本翻译为{target_lang}，注意只需要输出翻译后的结果，不要额外解释："
        "\n\n{source_text}",
        "Reference the following translations:\n{terms}\n\nTranslate the following text into "
        "{target_lang}. Note that you must ONLY output the translated result without any "
        "additional explanation:\n\n{source_text}",
        line_zh="{source_term} 翻译成 {target_term}", line_en="{source_term} translates to "
        "{target_term}"),
    "style": Template(
        "请将以下文本翻译为{target_lang}。\n注意翻译的风格要严格符合【{target_style}】\n\n{source_text}",
        "Please translate the following text into {target_lang}. Note that the translation style "
        "must strictly conform to [{target_style}]:\n\n{source_text}"),
    "personalization": Template(
        "【待翻译文本】\n{source_text}\n\n【翻译任务】\n{preferences}\n{final}、将【待翻译文本】翻译为"
        "{target_lang}。",
        "[Source Text]\n{source_text}\n\n[Translation Tasks]\n{preferences}\n{final}. Translate "
        "the [Source Text] into {target_lang}.",
        line_zh="{n}、{preference}", line_en="{n}. {preference}", numbered_from=1),
    "delimiters": Template(
        "请将以下文本准确翻译为{target_lang}。\n你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，"
        "并注意分隔符的位置。\n\n{source_text}",
        "Please accurately translate the following text into {target_lang}.\nYou must retain the "
        "exact same number of delimiters in the translation. Strictly do not omit, escape, or "
        "translate these symbols, and pay close attention to their placement.\n\n{source_text}"),
    # "Structured Data 1". The Chinese text names {source_text} twice (in its task line and
    # under 数据输入); both are filled, as written.
    "structured": Template(
        "# 任务目标\n将下方{source_text}中的{format_type}格式数据翻译为{target_lang}。\n\n# 严格约束\n"
        "1. 结构锁定：绝对保持原有的{format_type}数据结构、缩进和层级完全不变。\n"
        "2. 选择性翻译：仅翻译面向用户展示的可见文本内容。\n"
        "3. 禁止修改：严禁翻译或更改任何代码标签、键名 (Key)、变量占位符（如{{var}}、${var}、%s、%d等）"
        "或代码属性。\n\n# 数据输入\n{source_text}",
        "### Task\nTranslate the user-facing text within the following {format_type} data into "
        "{target_lang}.\n\n### Strict Rules\n1. Structure Preservation: You MUST preserve the "
        "original {format_type} data structure, nesting, hierarchy, and indentation exactly as "
        "they are.\n2. Selective Translation: Translate ONLY the visible, user-facing text "
        "content/values.\n3. Strict Non-Translation: NEVER translate or alter code tags, keys, "
        "properties, object names, or variable placeholders. Leave them exactly in their "
        "original English/code form.\n\n### Source Data\n{source_text}"),
    # "Structured Data 2": background information, which is what the agent's context is.
    "context": Template(
        "【背景信息】\n{background_text}\n\n请结合背景信息将以下文本翻译为{target_lang}。\n\n【待翻译文本】\n"
        "{source_text}",
        "[Background Information]\n{background_text}\n\nPlease translate the following text into "
        "{target_lang}, taking the provided background information into consideration.\n\n"
        "[Source Text]\n{source_text}"),
}

TONES: dict[str, tuple[str, str] | None] = {
    "neutral": None,  # no style instruction: the default prompt
    "formal": ("正式", "formal"),
    "friendly": ("亲切友好", "friendly"),
}
"""The agent's Tone picker -> the style prompt's ``{target_style}`` (Chinese, English)."""


@dataclass(frozen=True, slots=True)
class Family:
    """One model family at one size: ``prompt(kind, ...)`` renders its official instruction."""

    name: str
    title: str
    models: tuple[str, ...]  # official model names (quantised variants are suffixes of these)
    templates: Mapping[str, Template]
    sampling_by_size: Mapping[str, Sampling]
    context_length: int  # tokens, input + output, that the family is used with
    context_note: str
    size: str = "7b"
    chimera: bool = False  # Hunyuan-MT-Chimera fuses this family's candidates
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def sampling(self) -> Sampling:
        return self.sampling_by_size[self.size]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in KINDS if k in self.templates)

    @property
    def sizes(self) -> tuple[str, ...]:
        return tuple(self.sampling_by_size)

    def supports(self, kind: str) -> bool:
        return kind in self.templates

    def at_size(self, size: str) -> Family:
        """The same family at another size (sampling differs per size)."""
        if size not in self.sampling_by_size:
            raise ValueError(f"{self.title} has no {size} model; sizes: "
                             f"{', '.join(self.sizes)}.")
        return replace(self, size=size)

    def prompt(self, kind: str, *, text: str, source: str, target: str, **fields: Any) -> str:
        """The user message for *kind*: ``terminology`` takes ``terms=[(src, tgt), ...]``,
        ``context`` ``context=``, ``style`` ``style=``, ``personalization``
        ``preferences=[...]``, ``structured`` ``format_type=``. Raises UnsupportedPromptError
        for a kind this family does not publish, ValueError for a missing field."""
        template = self.templates.get(kind)
        if template is None:
            raise UnsupportedPromptError(
                f"{self.title} has no official {kind} instruction (it has: "
                f"{', '.join(self.kinds)}).")
        src, tgt = get_language(source), get_language(target)
        chinese = (src.is_chinese or tgt.is_chinese or template.en is None)
        body = template.zh if chinese and template.zh is not None else template.en
        assert body is not None
        values: dict[str, str] = {"source_text": text}
        if template.target_field:
            values[template.target_field] = tgt.chinese if chinese else tgt.english
        elif not tgt.is_chinese:
            raise UnsupportedPromptError(
                f"{self.title}'s {kind} instruction translates into Chinese only.")
        values.update(_fields(kind, template, chinese, text, fields))
        return _fill(body, values)


def _fields(kind: str, template: Template, chinese: bool, text: str,
            fields: Mapping[str, Any]) -> dict[str, str]:
    def need(name: str) -> Any:
        value = fields.get(name)
        if value is None or (isinstance(value, (str, list, tuple)) and not value):
            raise ValueError(f"The {kind} instruction needs {name}=.")
        return value

    line = template.line_zh if chinese else template.line_en
    if kind == "terminology":
        terms: Sequence[tuple[str, str]] = need("terms")
        return {"terms": "\n".join(_fill(line, {"source_term": s, "target_term": t})
                                   for s, t in terms)}
    if kind == "context":
        context = str(need("context"))
        return {"context": context, "background_text": context}
    if kind == "style":
        return {"target_style": str(need("style"))}
    if kind == "personalization":
        prefs: Sequence[str] = need("preferences")
        lines = [_fill(line, {"n": str(n), "preference": p})
                 for n, p in enumerate(prefs, start=template.numbered_from)]
        return {"preferences": "\n".join(lines), "final": str(template.numbered_from + len(prefs))}
    if kind == "structured":
        return {"format_type": str(need("format_type"))}
    if kind == "formatted":
        return {"src_text_with_format": text}
    return {}


_FIELD = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` for the given names in one pass (other braces stay as written)."""
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), template)


FAMILIES: dict[str, Family] = {
    "hunyuan-mt": Family(
        "hunyuan-mt", "Hunyuan-MT",
        ("tencent/Hunyuan-MT-7B", "tencent/Hunyuan-MT-7B-fp8",
         "tencent/Hunyuan-MT-Chimera-7B", "tencent/Hunyuan-MT-Chimera-7B-fp8"),
        _HUNYUAN_MT, {"7b": _CLASSIC}, 8192,
        "about 8k tokens input + output (maintainer's answer, Hunyuan-MT issue #8)",
        chimera=True),
    "hy-mt1.5": Family(
        "hy-mt1.5", "HY-MT1.5",
        ("tencent/HY-MT1.5-1.8B", "tencent/HY-MT1.5-1.8B-FP8", "tencent/HY-MT1.5-1.8B-GPTQ-Int4",
         "tencent/HY-MT1.5-1.8B-GGUF", "tencent/HY-MT1.5-7B", "tencent/HY-MT1.5-7B-FP8",
         "tencent/HY-MT1.5-7B-GGUF"),
        _HY_MT15, {"1.8b": _CLASSIC, "7b": _CLASSIC}, 8192,
        "not published; taken as Hunyuan-MT's practical 8k (the README's example generates "
        "up to 2048 tokens)"),
    "hy-mt2": Family(
        "hy-mt2", "Hy-MT2",
        ("tencent/Hy-MT2-1.8B", "tencent/Hy-MT2-1.8B-FP8", "tencent/Hy-MT2-1.8B-GGUF",
         "tencent/Hy-MT2-7B", "tencent/Hy-MT2-7B-FP8", "tencent/Hy-MT2-7B-GGUF",
         "tencent/Hy-MT2-30B-A3B", "tencent/Hy-MT2-30B-A3B-FP8"),
        _HY_MT2, {"1.8b": _MT2_DENSE, "7b": _MT2_DENSE, "30b-a3b": _MT2_MOE}, 8192,
        "not published; 8k leaves room for the recommended max_tokens 4096 of output"),
}
DEFAULT_FAMILY = "hunyuan-mt"


def get_family(name: str) -> Family:
    """A family by name (``hy-mt2``) or by a model name (``tencent/Hy-MT2-30B-A3B`` picks the
    size too). Raises ValueError naming the known families."""
    key = name.strip().lower()
    if key in FAMILIES:
        return FAMILIES[key]
    found = detect_family(name)
    if found is None:
        raise ValueError(f"Unknown model family {name!r}; known: {', '.join(FAMILIES)} "
                         "(or auto).")
    return found


_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"hy[-_ ]?mt[-_ ]?2(?![.\d])"), "hy-mt2"),
    (re.compile(r"hy[-_ ]?mt[-_ ]?1[._]?5"), "hy-mt1.5"),
    (re.compile(r"hunyuan[-_ ]?mt"), "hunyuan-mt"),
)
_SIZES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"30b[-_]?a3b|a3b"), "30b-a3b"),
    (re.compile(r"1[._]8b"), "1.8b"),
    (re.compile(r"7b"), "7b"),
)


def detect_family(model: str | None) -> Family | None:
    """The family and size a model's name or path says (``/models/Hy-MT2-1.8B-FP8``), if any."""
    if not model:
        return None
    text = model.strip().lower()
    for pattern, name in _PATTERNS:
        if pattern.search(text):
            family = FAMILIES[name]
            for size_pattern, size in _SIZES:
                if size in family.sampling_by_size and size_pattern.search(text):
                    return family.at_size(size)
            return family
    return None


_SERVED: list[str] = []  # the model the server reported last (its root, else its id)


def note_served_model(model: str | None) -> None:
    """Remember what ``/v1/models`` says the server serves (for ``HYMT_MODEL_FAMILY=auto``)."""
    if model:
        _SERVED[:] = [model]


def served_model() -> str | None:
    """What ``/v1/models`` said the server serves (its root, else its id), if it was asked."""
    return _SERVED[0] if _SERVED else None


def forget_served_model() -> None:
    """Forget the served model (tests; a new server)."""
    _SERVED.clear()


def family_in_force(settings: Settings | None = None) -> Family:
    """The family prompts and sampling follow: HYMT_MODEL_FAMILY, else detected (see above)."""
    if settings is None:
        from hymt_chat.settings import get_settings

        settings = get_settings()
    chosen = (getattr(settings, "model_family", "auto") or "auto").strip().lower()
    hints = [*_SERVED, getattr(settings, "model", None), getattr(settings, "model_path", None)]
    detected = next((f for f in map(detect_family, hints) if f is not None), None)
    if chosen == "auto":
        return detected or FAMILIES[DEFAULT_FAMILY]
    family = get_family(chosen)
    if detected is not None and detected.name == family.name:
        return detected  # the served model's size decides its sampling
    return family
