"""Overload, a cut connection, cancel, a sidecar down at start and an engine killed mid-burst:
the app's retry policy and client against the engine double.

Real: the app's :class:`Translator`, :class:`Policy` (window, queue, retries) and
:class:`ModelClient` over real HTTP. The double (``tests/support/engine_double.py``) is the
engine: its admission cap answers the 503s (2 running + 2 waiting, the demo sidecar's), it
holds requests until the test lets them finish, counts the ones a client hung up on as
aborted, and cuts answers mid-way. The real vLLM's 503 under its cap and its abort on hang-up
are pinned in ``tests/test_engine_contract.py``; a real SIGKILL of a vLLM replica in the
middle of a burst and the Supervisor's restart in ``tests/test_e2e_scale.py``.

The answer checks are off: the double echoes the source text, and the checks' repair call
would add requests that say nothing about overload. The answers carry each message's order
code (``tests/support/bursts.py``), which is what "nothing lost, nothing mixed" reads.
"""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import ModelBusyError
from tests.support.bursts import Watch, assert_mapped, messages
from tests.support.engine_double import EngineDouble
from tests.support.restartable import Restartable

PARAGRAPH = ("La livraison est arrivée avec deux jours de retard et le colis était endommagé. "
             "J'ai contacté le service client trois fois sans obtenir de réponse claire.")


def _translator(server: EngineDouble | Restartable, *, retries: bool = True,
                deadline: float = 600) -> tuple[Translator, Policy]:
    """A policy as the app builds for a server it was told nothing about (window 8)."""
    settings = server.settings(deadline=deadline, retries=retries, checks=False)
    policy = Policy(deadline=deadline, retries=retries)
    return Translator(settings, ModelClient(settings), policy), policy


def _full(engine: EngineDouble) -> bool:
    """The cap is reached (2 running, 2 waiting) and it has refused a request already."""
    return engine.count("refused") >= 1 and len(engine.running) + len(engine.waiting) == 4


async def test_24_at_once_all_delivered_through_503s(engine: EngineDouble):
    """The window starts at 8, the engine admits 4: the cap's 503s meet the burst for certain
    (nothing finishes while it is held), and every message still arrives, each exactly once."""
    engine.set_hold(True)
    translator, policy = _translator(engine)
    watch = Watch(policy)
    sent = messages(24)
    tasks = [asyncio.create_task(translator.translate(text, "en", lang, user=f"agent-{i}"))
             for i, (lang, text, _) in enumerate(sent)]
    await engine.until(_full, "the burst to fill the engine and meet a 503")
    engine.set_hold(False)
    results = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    assert_mapped(sent, results)  # all 24, each its own
    assert watch.busy_retries >= 1 and watch.delivered == 24
    assert engine.count("finished") == 24  # each answered once: no message ran twice
    # The 503s cut the window below its starting width (it may have grown back since: on
    # the double every answer after the release is a success).
    assert policy.cuts >= 1
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_24_at_once_without_retries_loses_messages(engine: EngineDouble):
    """The same burst with retries off: the 503s reach the users (the test above bites)."""
    engine.set_hold(True)
    translator, policy = _translator(engine, retries=False)
    sent = messages(24)
    tasks = [asyncio.create_task(translator.translate(text, "en", lang, user=f"agent-{i}"))
             for i, (lang, text, _) in enumerate(sent)]
    await engine.until(_full, "the burst to fill the engine and meet a 503")
    engine.set_hold(False)
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 120)
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    assert failed and len(failed) == engine.count("refused")  # each 503 lost one message
    assert all(isinstance(f, ModelBusyError) and "HTTP 503" in str(f) for f in failed), failed
    delivered = [(m, o) for m, o in zip(sent, outcomes, strict=True)
                 if not isinstance(o, BaseException)]
    assert_mapped([m for m, _ in delivered], [o for _, o in delivered])
    assert len(delivered) == engine.count("finished") == 24 - len(failed)
    assert policy.in_flight == 0


async def test_cancelling_the_call_aborts_the_generation_on_the_server(engine: EngineDouble):
    """Chainlit's Stop cancels the handler's task: the client hangs up and the engine drops
    the request at once (the double counts it aborted; it never finishes). The request is held,
    so the cancel always lands while it generates: no race with an answer already back."""
    engine.set_hold(True)
    translator, policy = _translator(engine)
    task = asyncio.create_task(translator.translate(PARAGRAPH, "en", "fr", user="agent"))
    await engine.until(lambda d: d.count("running") == 1, "the paragraph to be generating")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert policy.in_flight == 0 and policy.queue_length == 0  # the slot came back
    await engine.until(lambda d: d.count("aborted") == 1, "the engine to drop the request")
    assert engine.count("finished") == 0 and len(engine.requests) == 1


async def test_sidecar_down_at_start_the_waiting_message_is_delivered_once_up():
    """Nothing listens at the model's address when the message is sent: it waits (retrying,
    the deadline far) instead of failing, and is delivered once the engine starts there.
    The engine is started after the test has seen the message fail to connect twice: an
    event, not a clock."""
    with Restartable() as sidecar:
        translator, _ = _translator(sidecar, deadline=900)
        events: list[PolicyEvent] = []
        refused = asyncio.Event()

        def seen(event: PolicyEvent) -> None:
            events.append(event)
            if sum(e.kind == "retrying" and e.error == "unavailable" for e in events) >= 2:
                refused.set()

        lang, text, code = messages(1)[0]
        task = asyncio.create_task(translator.translate(text, "en", lang, on_event=seen))
        await asyncio.wait_for(refused.wait(), 60)
        assert not task.done()  # waiting, not failed
        await asyncio.to_thread(sidecar.start)
        result = await asyncio.wait_for(task, 60)
        assert code in result.text
        assert events[-1].kind == "succeeded"
        assert sidecar.engine.count("finished") == 1  # delivered once


async def test_an_engine_killed_mid_burst_delivers_every_message_after_restart():
    """The engine dies with requests running and waiting in it: their answers are cut
    mid-way, the port is closed, then a new engine starts on it. Every message arrives, each
    once: the ones the first engine answered are not sent again, the cut ones are retried."""
    with Restartable(hold=True) as sidecar:
        first = sidecar.start()
        translator, policy = _translator(sidecar, deadline=900)
        watch = Watch(policy)
        sent = messages(12)
        tasks = [asyncio.create_task(translator.translate(text, "en", lang, user=f"agent-{i}"))
                 for i, (lang, text, _) in enumerate(sent)]
        await first.until(lambda d: len(d.running) == 2, "both slots running")
        first.release(2)  # two answered before the crash
        await first.until(lambda d: d.count("finished") == 2 and len(d.running) == 2,
                          "two answered and two more running")
        answered = {r.prompt for r in first.requests if r.state == "finished"}
        cut = len(first.running) + len(first.waiting)
        await asyncio.to_thread(sidecar.kill)
        assert first.count("reset") >= cut  # the answers under way were cut
        await asyncio.to_thread(sidecar.start)
        sidecar.engine.set_hold(False)
        results = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    assert_mapped(sent, results)  # every message, each its own, none lost to the crash
    second = sidecar.engine
    assert second.count("finished") == len(sent) - 2
    assert not answered & set(second.prompts)  # what was answered is not sent again
    assert watch.unavailable_retries >= cut  # the cut-off calls were retried
    assert policy.in_flight == 0 and policy.queue_length == 0
