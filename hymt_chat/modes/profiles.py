"""The three chat profiles of the page, and the few sentences and decisions the app needs to switch
between them. Pure (no Chainlit): ``app.py`` turns these into ``cl.ChatProfile``, messages and
buttons.

* **Translator** — pick languages, paste text or a file (the original mode; the default).
* **Support agent** — a two-way conversation with one customer (``hymt_chat.modes.agent.turns``).
* **Kiosk** — strangers at a public screen: big buttons, read aloud, nothing kept
  (``hymt_chat.modes.kiosk``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hymt_chat.errors import HymtError
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.kiosk import KIOSK_PROFILE

__all__ = [
    "AGENT_PROFILE",
    "KIOSK_PROFILE",
    "PROFILES",
    "TRANSLATOR_PROFILE",
    "Profile",
    "agent_state_of",
    "profile_name",
    "saved_markdown",
]

TRANSLATOR_PROFILE = "Translator"
AGENT_PROFILE = "Support agent"
AGENT_STATE = "agent_state"  # key in the user session and in the thread's metadata


@dataclass(frozen=True, slots=True)
class Profile:
    name: str  # its identity (threads, settings); shown as the page's word of *key*
    key: str  # its words in hymt_chat.modes.page_text: *key* its name, *key*_about its
    # Markdown description (shown when hovering the profile picker)
    icon: str  # a file under public/ or a URL ("" for none)
    starters: bool  # show the Translator's starters (the others show none)
    uploads: bool = True  # the composer's paperclip (a mode that takes no file shows none)


PROFILES: tuple[Profile, ...] = (
    Profile(TRANSLATOR_PROFILE, "translator", "", True),
    Profile(AGENT_PROFILE, "agent", "", False, uploads=False),
    Profile(KIOSK_PROFILE, "kiosk", "", False, uploads=False),
)
_NAMES = frozenset(p.name for p in PROFILES)


def profile_name(chat_profile: str | None) -> str:
    """The session's profile; the Translator when none was chosen (or an unknown name)."""
    return chat_profile if chat_profile in _NAMES else TRANSLATOR_PROFILE


def agent_state_of(metadata: Mapping[str, Any] | str | None) -> Conversation | None:
    """The Support-agent conversation saved in a thread's metadata (or a user session), or None
    when there is none or it cannot be read (then the agent starts a fresh conversation)."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return None
    if not isinstance(metadata, Mapping):
        return None
    state = metadata.get(AGENT_STATE)
    if not isinstance(state, Mapping):
        return None
    try:
        return Conversation.from_dict(state)
    except (HymtError, KeyError, TypeError, ValueError, AttributeError):
        return None


def saved_markdown(metadata: Mapping[str, Any] | None) -> str | None:
    """A thread's saved Support-agent conversation as Markdown a person reads, or None where
    the thread holds none (a data export renders each thread this way)."""
    from hymt_chat.modes.agent.transcript import transcript_markdown

    conversation = agent_state_of(metadata)
    if conversation is None or not conversation.transcript:
        return None
    return transcript_markdown(conversation)
