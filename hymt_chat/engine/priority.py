"""Request classes: who goes first, on our queue and on the engine (vLLM ``priority``).

Named in one place. Each class has a rank; a lower rank is served first by the policy's queue
and is sent to vLLM as the request's ``priority`` (vLLM serves lower values first when it runs
with ``--scheduling-policy priority``). Every class but ``interactive`` is *background*: it may
never hold the slots reserved for interactive messages.

The default order puts the back-translation check before documents, not last: an agent's turn
is shown only once its check is done, so a check queued behind a 50-part document would hold a
live reply for minutes. API requests (LibreTranslate/DeepL clients: a browser extension, Weblate)
come after every class that holds a live chat's answer and before documents: a tool hammering
the API must not slow a chat user, and a short API call must not wait behind a 50-part file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from hymt_chat.errors import HymtError

__all__ = ["API", "CLASSES", "DEFAULT_RANKS", "INTERACTIVE", "RequestClass", "parse_ranks"]

RequestClass = Literal["interactive", "best", "check", "api", "bulk"]
INTERACTIVE: RequestClass = "interactive"
BEST: RequestClass = "best"  # Best-quality candidates and their fusion
CHECK: RequestClass = "check"  # back-translation of an agent's reply
API: RequestClass = "api"  # the LibreTranslate- and DeepL-compatible HTTP APIs
BULK: RequestClass = "bulk"  # file and document parts, long pastes
CLASSES: tuple[RequestClass, ...] = (INTERACTIVE, BEST, CHECK, API, BULK)
DEFAULT_RANKS = "interactive=0,best=10,check=20,api=25,bulk=30"


def parse_ranks(text: str) -> Mapping[str, int]:
    """``"interactive=0,bulk=30"`` -> ranks for every class (unnamed ones keep their default).

    Raises HymtError naming the bad entry; interactive must stay the first class, because the
    reserved slots are what keeps a live message from waiting behind a document.
    """
    ranks = dict(_pairs(DEFAULT_RANKS))
    for name, value in _pairs(text):
        if name not in ranks:
            raise HymtError(f"Unknown request class {name!r} in HYMT_PRIORITIES; "
                            f"the classes are {', '.join(CLASSES)}.")
        ranks[name] = value
    if any(rank <= ranks[INTERACTIVE] for name, rank in ranks.items() if name != INTERACTIVE):
        raise HymtError("HYMT_PRIORITIES: interactive must have the lowest rank (served first).")
    return ranks


def _pairs(text: str) -> list[tuple[str, int]]:
    out = []
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, eq, value = entry.partition("=")
        try:
            out.append((name.strip(), int(value)))
        except ValueError:
            raise HymtError(f"HYMT_PRIORITIES entry {entry!r} is not name=integer.") from None
        if not eq:
            raise HymtError(f"HYMT_PRIORITIES entry {entry!r} is not name=integer.")
    return out
