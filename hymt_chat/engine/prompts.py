"""The prompt of the family in force, Chimera's fusion prompt, and the one-turn conversation.

No system message is ever sent. Every family's templates live in :mod:`hymt_chat.engine.families`;
the two unofficial ones below (HY-MT1.5's, used with Hunyuan-MT-7B only when an operator asks)
stay here because Hunyuan-MT-7B itself publishes none.
"""

from __future__ import annotations

from collections.abc import Sequence

from hymt_chat.engine.families import Family, family_in_force
from hymt_chat.lang.languages import get_language

CHIMERA_TEMPLATE = (
    "Analyze the following multiple {target} translations of the {source} segment surrounded in "
    "triple backticks and generate a single refined {target} translation. Only output the refined "
    "translation, do not explain.\n\n"
    "The {source} segment:\n```{text}```\n\n"
    "The multiple {target} translations:\n{candidates}"
)
# Published for HY-MT1.5 only; unofficial for Hunyuan-MT-7B, so callers opt in.
TERMINOLOGY_TEMPLATE = (
    "参考下面的翻译：\n{terms}\n\n将以下文本翻译为{target}，注意只需要输出翻译后的结果，不要额外解释：\n{text}"
)
CONTEXT_TEMPLATE = (
    "{context}\n参考上面的信息，把下面的文本翻译成{target}，注意不需要翻译上文，也不要额外解释：\n{text}"
)


def build_prompt(text: str, source: str, target: str, family: Family | None = None) -> str:
    """Full user message for translating ``text`` from ``source`` to ``target`` (codes): the
    default instruction of *family*, else of the family in force (HYMT_MODEL_FAMILY / auto)."""
    family = family or family_in_force()
    return family.prompt("default", text=text, source=source, target=target)


def build_chimera_prompt(text: str, source: str, target: str, candidates: Sequence[str]) -> str:
    """Fusion prompt for Hunyuan-MT-Chimera: the source and N numbered candidates."""
    if not candidates:
        raise ValueError("Chimera needs at least one candidate translation.")
    src, tgt = get_language(source), get_language(target)
    numbered = "\n".join(f"{i}. ```{c}```" for i, c in enumerate(candidates, start=1))
    return CHIMERA_TEMPLATE.format(
        target=tgt.english, source=src.english, text=text, candidates=numbered
    )


def build_terminology_prompt(
    text: str, target: str, terms: Sequence[tuple[str, str]]
) -> str:
    """Terminology template (unofficial for this model): ``terms`` are (source, target) pairs."""
    tgt = get_language(target)
    lines = "\n".join(f"{s} 翻译成 {t}" for s, t in terms)
    return TERMINOLOGY_TEMPLATE.format(terms=lines, target=tgt.chinese, text=text)


def build_context_prompt(text: str, target: str, context: str) -> str:
    """Context template (unofficial for this model): earlier turns help with pronouns, tone."""
    tgt = get_language(target)
    return CONTEXT_TEMPLATE.format(context=context, target=tgt.chinese, text=text)


def chat_messages(prompt: str) -> list[dict[str, str]]:
    """The whole conversation sent to the model: one user turn, no system message."""
    return [{"role": "user", "content": prompt}]
