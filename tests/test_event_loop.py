"""The app's serving loop (``hymt_chat.service.event_loop``): ``chainlit run`` applies
``nest_asyncio``, which puts asyncio's pure-Python Task and Future in place of the C ones;
``use_fast_loop`` gives the C ones back and runs the loop on uvloop (issue 28: the event loop
was the largest stage of a message's CPU after detection).

Each case runs in a Python process of its own, as ``chainlit run`` does (importing Chainlit's
CLI is what applies nest_asyncio), so the test process's own loop policy is left alone."""

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


def test_chainlits_cli_leaves_python_tasks_and_the_app_gets_c_tasks_on_uvloop():
    out = _run("""
        import asyncio
        import chainlit.cli  # noqa: F401 - applies nest_asyncio, as `chainlit run` does
        print("before", asyncio.Task.__module__)
        from hymt_chat.service.event_loop import loop_kind, use_fast_loop
        use_fast_loop()

        async def main():
            await asyncio.sleep(0)
            return loop_kind()

        print("after", asyncio.run(main()))  # Chainlit's call: nest_asyncio's run
    """)
    assert out.splitlines() == ["before asyncio.tasks", "after uvloop.Loop _asyncio"]


def test_a_sessions_config_is_the_global_one_and_no_profile_call_is_left_unawaited():
    """Chainlit's WebsocketSession.get_config runs set_chat_profiles nested (re-entering the
    loop) to read profiles' config_overrides; uvloop cannot be re-entered, and hymt-chat's
    profiles have no overrides, so the answer is the global config, given directly (with
    nothing may be said about a coroutine never awaited)."""
    out = _run("""
        import asyncio, gc
        import chainlit.cli  # noqa: F401
        from hymt_chat.service.event_loop import answer_config_directly, use_fast_loop
        use_fast_loop()
        import chainlit as cl
        from chainlit.config import config
        from chainlit.session import WebsocketSession
        answer_config_directly(WebsocketSession, config)  # as app.py does

        asked = []

        @cl.set_chat_profiles
        async def profiles(user=None, language=None):
            asked.append(1)
            return [cl.ChatProfile(name="Translator", markdown_description="x")]

        async def main():
            session = WebsocketSession(id="s", socket_id="k", emit=None, emit_call=None,
                                       user_env={}, client_type="webapp",
                                       chat_profile="Translator")
            return session.get_config() is config

        print(asyncio.run(main()), len(asked))
        gc.collect()
    """)
    assert out == "True 0"


def test_hymt_chats_profiles_have_no_config_overrides():
    """What makes answering get_config directly right: no profile overrides the config."""
    from hymt_chat.modes import profiles

    for profile in profiles.PROFILES:
        assert not getattr(profile, "config_overrides", None), profile.name
