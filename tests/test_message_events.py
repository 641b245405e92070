"""What a tab receives for one chat message, over the real app's socket (``chainlit run
app.py``, a stand-in model whose answers are marked ``EN:``; no vLLM, no browser).

Chainlit's ``@cl.on_message`` wraps each message in an ``on_message`` "run" step: two socket
events a message (the step, then its end) and, with history on, three database writes, for a
step the page draws as nothing (Chainlit's ``Messages`` component draws a run's children flat,
``frontend/src/components/chat/Messages/index.tsx``). ``app.py`` registers its handler bare
(five events a message would be a tenth of the app's CPU).

``@cl.on_chat_start`` runs the start as a task: ``task_start`` then disables the page's composer
(``useChatData``'s ``disabled`` includes ``loading``) and Enter does nothing until ``task_end``.
``app.py`` registers its start bare too: a tab can send from its first moment."""

from __future__ import annotations

from tests.support.tabs import Tab, app


async def test_a_message_gets_its_answer_between_task_start_and_end_and_no_run_step(tmp_path):
    with app(tmp_path) as (url, _):
        async with Tab(url) as tab:
            await tab.event("set_commands")  # the Translator's start: its command menu
            assert "task_start" not in [e for e, _ in tab.events]  # the composer stayed free
            assert not [d for _, d in tab.events if isinstance(d, dict)
                        and d.get("name") == "on_chat_start"]  # nor a run step for it
            start = len(tab.events)
            await tab.send("Bonjour tout le monde, comment allez-vous aujourd'hui ?")
            await tab.wait("EN:Bonjour tout le monde")
            await tab._first(lambda: "task_end" in [e for e, _ in tab.events[start:]] or None,
                             60, "no task_end")
            events = tab.events[start:]
    steps = [d for e, d in events if e in ("new_message", "update_message")]
    names = [e for e, _ in events]
    assert not [s for s in steps if s.get("type") == "run" or s.get("name") == "on_message"]
    answer = next(s for s in steps if "EN:Bonjour" in (s.get("output") or ""))
    assert answer["type"] == "assistant_message" and answer.get("parentId") is None
    assert names.index("task_start") < names.index("new_message") < names.index("task_end")
