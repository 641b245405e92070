"""Protected spans for the agent mode: the mechanism lives in :mod:`hymt_chat.text.protect`.

It moved to the text layer because the engine masks amounts, dates and numbers with it too
(:mod:`hymt_chat.engine.fidelity`); this name stays for the mode's imports.
"""

from hymt_chat.text.protect import (
    Masked,
    Span,
    Unmasked,
    find_spans,
    mask,
    plain_text,
    strip_tokens,
    token,
    unmask,
)

__all__ = ["Masked", "Span", "Unmasked", "find_spans", "mask", "plain_text", "strip_tokens",
           "token", "unmask"]
