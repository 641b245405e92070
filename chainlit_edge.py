"""The one typed edge of Chainlit's untyped surface: each call that ``app.py`` and
``presenter.py`` make into a Chainlit function left without annotations goes through here,
typed, so mypy checks both files strictly (Chainlit is pinned: ``tests/test_chainlit_pin.py``)."""

from __future__ import annotations

from typing import Any, Protocol

import chainlit as cl
from chainlit.data import get_data_layer
from chainlit.data.base import BaseDataLayer
from chainlit.utils import utc_now

__all__ = ["data_layer", "now", "remove", "send", "session_get", "session_set", "update"]


class _Sent(Protocol):
    """What Chainlit sends to the page and updates in place: a message, a step."""

    async def send(self) -> Any: ...

    async def update(self) -> Any: ...


def session_get(key: str) -> Any:
    """The tab's value under *key* in Chainlit's user session (None: not set)."""
    return cl.user_session.get(key)  # type: ignore[no-untyped-call]


def session_set(key: str, value: object) -> None:
    cl.user_session.set(key, value)  # type: ignore[no-untyped-call]


def data_layer() -> BaseDataLayer | None:
    """Chainlit's history layer (None: the app keeps no history)."""
    layer: BaseDataLayer | None = get_data_layer()  # type: ignore[no-untyped-call]
    return layer


def now() -> str:
    """Chainlit's timestamp format, for a step's start and end."""
    stamp: str = utc_now()  # type: ignore[no-untyped-call]
    return stamp


async def send(item: _Sent) -> None:
    await item.send()


async def update(item: _Sent) -> None:
    await item.update()


async def remove(item: cl.Action | cl.Message) -> None:
    await item.remove()  # type: ignore[no-untyped-call]
