"""The rooms' and the desk's conversations as a holding of personal data: what erasure, export
and retention (:mod:`hymt_chat.service.erasure`) find and remove in their tables.

A subject's conversations: a room by its token, a desk visitor's by their id, an agent's the
ones they held, and a text's every conversation where it was written (a message, its
translation, the room's transcript or glossary). Whole conversations go, as with the history's
threads: a line alone would leave the rest of what the customer said.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from hymt_chat.service.erasure import Part, Subject
from hymt_chat.store.conversations import ConversationStore, conversations_location

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["ConversationRecords"]


class ConversationRecords:
    """The conversations' tables of a deployment, for one erasure, export or sweep."""

    name = "conversations"

    def __init__(self, store: ConversationStore) -> None:
        self.store = store

    @classmethod
    def for_settings(cls, settings: Settings) -> ConversationRecords:
        return cls(ConversationStore(conversations_location(settings)))

    def _tokens(self, subject: Subject) -> list[str]:
        if subject.kind == "room":
            return [subject.text] if self.store.load(subject.text) is not None else []
        if subject.kind == "visitor":
            return self.store.tokens(visitor=subject.text)
        if subject.kind == "agent":
            return self.store.tokens(agent=subject.text)
        return self.store.containing(subject.text)

    def erase(self, subject: Subject) -> Part:
        tokens = self._tokens(subject)
        said = [text for token in tokens if (held := self.store.load(token)) is not None
                for m in held.messages for text in (m.original, m.translation) if text]
        gone = self.store.forget(tokens)
        return Part(counts={"conversations": gone} if gone else {}, texts=said)

    def export(self, subject: Subject) -> Part:
        found = [held for token in self._tokens(subject)
                 if (held := self.store.load(token)) is not None]
        records = [{"room": dataclasses.asdict(held.room),
                    "messages": [dataclasses.asdict(m) for m in held.messages]}
                   for held in found]
        return Part(counts={"conversations": len(found)} if found else {},
                    records={"conversations.json": records} if found else {})

    def sweep(self, before: float) -> dict[str, int]:
        gone = self.store.forget(self.store.ended_before(before))
        return {"conversations": gone} if gone else {}

    def close(self) -> None:
        self.store.close()
