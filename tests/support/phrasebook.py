"""Answers for the engine double that read as translations: a phrasebook.

The double echoes the source text unless told otherwise; the app's answer checks (language,
values, leftovers) and the tests that ask "did it come back in English?" need an answer in the
target language. :func:`phrasebook` builds an answer function that reads the prompt as the
model would (the instruction names the target language, in English or in Chinese; the text
follows it) and replaces each phrase it knows, longest first, by the target language's
version. Whatever it does not know (tags, placeholders, numbers, URLs) comes back as written,
as a good translation keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from hymt_chat.lang.languages import get_language

__all__ = ["phrasebook", "source_text", "target_code"]

# "Translate the following segment into French, without ...", "... text into Spanish. Note"
_INTO = re.compile(r"\binto ([A-Z][A-Za-z ()-]*?)[,.:]")
# "把下面的文本翻译成英语，..." / "将以下文本翻译为英语，..."
_ZH_INTO = re.compile(r"翻译[成为]([^，,：:。\s]+)")
_TERMINOLOGY_TAIL = "不要额外解释：\n"


def target_code(prompt: str) -> str:
    """The target language the prompt's instruction names (its code)."""
    instruction = prompt.split("\n\n", 1)[0] if not prompt.startswith("参考") else prompt
    for pattern in (_INTO, _ZH_INTO):
        if m := pattern.search(instruction):
            return get_language(m.group(1).strip()).code
    raise ValueError(f"no target language in the prompt: {prompt[:120]!r}")


def source_text(prompt: str) -> str:
    """The text to translate: after the first blank line of the official templates, after the
    instruction's last line in the terminology one (its terms come first)."""
    if prompt.startswith("参考") and _TERMINOLOGY_TAIL in prompt:
        return prompt.rsplit(_TERMINOLOGY_TAIL, 1)[1]
    return prompt.split("\n\n", 1)[-1]


def phrasebook(book: Mapping[str, Mapping[str, str]]) -> Callable[[str], str]:
    """An answer function: each phrase of *book* (``{phrase: {target code: translation}}``)
    found in the prompt's text is replaced by its translation into the prompt's target."""
    phrases = sorted(book, key=len, reverse=True)

    def answer(prompt: str) -> str:
        target, text = target_code(prompt), source_text(prompt)
        for phrase in phrases:
            if phrase in text and target in book[phrase]:
                text = text.replace(phrase, book[phrase][target])
        return text

    return answer
