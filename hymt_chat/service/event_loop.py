"""The app's event loop: asyncio's C tasks and futures back under Chainlit's nest_asyncio.

``chainlit run`` applies ``nest_asyncio`` before it loads ``app.py``: that makes the loop
re-entrant (Chainlit's ``WebsocketSession.get_config`` runs ``set_chat_profiles`` nested) and,
to do so on old Pythons, swaps asyncio's Task and Future for their pure-Python versions. Every
socket event, model call and timer of a message then stepped through Python. On Python 3.11
nest_asyncio's re-entrant loop runs C tasks as well (its step sets the current task aside
either way), so the C ones are put back and re-entrance is kept.

uvloop was tried under it too (it cannot be re-entered, so Chainlit's nested call had to be
answered directly): 3-5 % less CPU a message than this in alternating runs
(``benchmarks/app_ceiling.py``), and one test of the rooms (an agent's reply reaching the guest)
failed one run in three with it, never without it. Not worth a loop of another kind.

:func:`use_c_tasks` runs where ``app.py`` is imported: after ``nest_asyncio.apply()`` and
before Chainlit's ``asyncio.run`` creates the first task.
"""

from __future__ import annotations

import asyncio
import asyncio.futures
import asyncio.tasks

__all__ = ["loop_kind", "use_c_tasks"]


def use_c_tasks() -> None:
    """asyncio's C Task and Future again, where nest_asyncio put the Python ones."""
    import _asyncio  # CPython's C implementation

    asyncio.Task = asyncio.tasks.Task = asyncio.tasks._CTask = _asyncio.Task  # type: ignore[attr-defined,misc]
    asyncio.Future = asyncio.futures.Future = asyncio.futures._CFuture = _asyncio.Future  # type: ignore[attr-defined,misc]


def loop_kind() -> str:
    """The running loop's and its tasks' kinds (logged at start; read by the tests)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    return f"{type(loop).__module__}.{type(loop).__name__} {type(task).__module__}"
