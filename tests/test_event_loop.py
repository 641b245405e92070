"""The app's tasks (``hymt_chat.service.event_loop``): ``chainlit run`` applies
``nest_asyncio``, which puts asyncio's pure-Python Task and Future in place of the C ones;
``use_c_tasks`` gives the C ones back (issue 28: the event loop was the largest stage of a
message's CPU after detection), and the loop stays re-entrant for Chainlit's nested call.

Each case runs in a Python process of its own, as ``chainlit run`` does (importing Chainlit's
CLI is what applies nest_asyncio), so the test process's own asyncio is left alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.chainlit_app import ROOT


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                           textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "never awaited" not in done.stderr, done.stderr[-3000:]
    return done.stdout.strip()


def test_chainlits_cli_leaves_python_tasks_and_the_app_gets_c_tasks():
    out = _run("""
        import asyncio
        import chainlit.cli  # noqa: F401 - applies nest_asyncio, as `chainlit run` does
        print("before", asyncio.Task.__module__)
        from hymt_chat.service.event_loop import loop_kind, use_c_tasks
        use_c_tasks()

        async def main():
            await asyncio.gather(asyncio.sleep(0), asyncio.sleep(0))
            return loop_kind()

        print("after", asyncio.run(main()))  # Chainlit's call: nest_asyncio's run
    """)
    assert out.splitlines() == ["before asyncio.tasks",
                                "after asyncio.unix_events._UnixSelectorEventLoop _asyncio"]


def test_chainlits_nested_profile_call_still_runs_on_c_tasks():
    """Chainlit's WebsocketSession.get_config runs set_chat_profiles nested (re-entering the
    running loop): with C tasks it still runs, and answers."""
    out = _run("""
        import asyncio
        import chainlit.cli  # noqa: F401
        from hymt_chat.service.event_loop import use_c_tasks
        use_c_tasks()
        import chainlit as cl
        from chainlit.config import config
        from chainlit.session import WebsocketSession

        asked = []

        @cl.set_chat_profiles
        async def profiles(user=None, language=None):
            await asyncio.sleep(0)  # a task switch inside the nested run
            asked.append(type(asyncio.current_task()).__module__)
            return [cl.ChatProfile(name="Translator", markdown_description="x")]

        async def main():
            session = WebsocketSession(id="s", socket_id="k", emit=None, emit_call=None,
                                       user_env={}, client_type="webapp",
                                       chat_profile="Translator")
            return session.get_config() is config

        print(asyncio.run(main()), asked)
    """)
    assert out == "True ['_asyncio']"
