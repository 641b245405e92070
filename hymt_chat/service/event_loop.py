"""The app's event loop: asyncio's C tasks and futures back, and uvloop under them.

``chainlit run`` applies ``nest_asyncio`` before it loads ``app.py``: that swaps asyncio's
Task and Future for their pure-Python versions and the loop's step for a Python one, so that
a loop can be re-entered. Every socket event, model call and timer of a message then steps
through Python (``benchmarks/app_ceiling.py --profile``: the event loop was the largest stage
of a message's CPU after detection). Nothing in hymt-chat re-enters the loop; Chainlit's one
attempt (``WebsocketSession.get_config`` runs ``set_chat_profiles`` nested, for profiles'
``config_overrides``, which ours have none of) is answered directly instead
(:func:`answer_config_directly`, given Chainlit's class by ``app.py``: the core does not
import Chainlit).

Both run where ``app.py`` is imported: after ``nest_asyncio.apply()`` and before Chainlit's
``asyncio.run`` creates the serving loop.
"""

from __future__ import annotations

import asyncio
import asyncio.futures
import asyncio.tasks
import importlib
from typing import Any

__all__ = ["answer_config_directly", "loop_kind", "use_fast_loop"]


def use_fast_loop() -> None:
    """C tasks and futures again, and uvloop's policy for the loop ``asyncio.run`` creates."""
    import _asyncio  # CPython's C implementation, which nest_asyncio replaced

    asyncio.Task = asyncio.tasks.Task = asyncio.tasks._CTask = _asyncio.Task  # type: ignore[attr-defined,misc]
    asyncio.Future = asyncio.futures.Future = asyncio.futures._CFuture = _asyncio.Future  # type: ignore[attr-defined,misc]
    uvloop = importlib.import_module("uvloop")  # after the above: it binds asyncio.Task on import
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.set_event_loop(uvloop.new_event_loop())  # the one Chainlit's asyncio.run gets


def loop_kind() -> str:
    """The running loop's and its tasks' kinds, for ``/health``-style checks and tests."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    return f"{type(loop).__module__}.{type(loop).__name__} {type(task).__module__}"


def answer_config_directly(session_class: type, config: object) -> None:
    """Chainlit's session (*session_class*) asks the loop to run ``set_chat_profiles`` nested
    only to read profiles' ``config_overrides``; with none of those the answer is the global
    *config*, and a loop that cannot be re-entered would leave the coroutine un-awaited."""

    def get_config(self: Any) -> object:
        if not getattr(self, "config", None):
            self.config = config
        return self.config

    session_class.get_config = get_config  # type: ignore[attr-defined]
