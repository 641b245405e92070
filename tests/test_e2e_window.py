"""The window learned from the engine's /metrics, for a server reached by URL alone (as
``HYMT_BASE_URL`` alone would: no window setting, no profile).

Real: the watch the app builds (``build_watch``, the same as ``watch_window``'s) reading
``/metrics`` over HTTP with the real reader, the Policy it resizes, the Translator and the
client. The double (``tests/support/engine_double.py``) is the engine, 2 slots and a cap of 4
like the demo sidecar; its page counts what it really runs and queues (the real vLLM's page
is pinned to it in ``tests/test_engine_contract.py``). The test holds the requests and ticks
the watch itself: each reading is taken in a state the test built, not in whatever moment a
clock-driven loop hits (a "waiting" that lasts under a second on the real engine). The
watch's faults (missing, slow, lying pages, restarts) are in test_window_faults.py.
"""

from __future__ import annotations

import asyncio

import httpx

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.engine.window import WindowState, WindowWatch, build_watch
from hymt_chat.sidecar.capacity import engine_slots
from tests.support.engine_double import EngineDouble, running_double
from tests.test_e2e_priority import DOCUMENT

BURST = [("Bonjour, ma commande n'est pas arrivée.", "fr"),
         ("Hallo, wann kommt mein Paket?", "de"),
         ("Hola, ¿puedo cambiar la dirección?", "es"),
         ("Buongiorno, vorrei annullare l'ordine.", "it"),
         ("Olá, recebi o produto errado.", "pt"),
         ("Goedendag, mijn pakket is beschadigd.", "nl")]


def _app(engine: EngineDouble) -> tuple[Translator, Policy, WindowWatch]:
    """What the app builds for a server given by URL alone (get_policy, watch_window). Answer
    checks off: the double echoes, and the window is this test's subject."""
    settings = engine.settings(checks=False)
    assert settings.window_max is None and settings.profile == "auto"
    slots = engine_slots(settings)
    policy = Policy(window_max=slots, deadline=settings.deadline,
                    reserve=settings.interactive_reserve, ranks=settings.priorities)
    return (Translator(settings, ModelClient(settings), policy), policy,
            build_watch(settings, policy))


async def test_the_window_learns_the_engines_two_slots_and_nothing_waits_in_vllm(
        engine: EngineDouble):
    translator, policy, watch = _app(engine)
    assert (policy.window_max, watch.state.origin) == (2, "safe default")
    engine.set_hold(True)
    seen: list[WindowState] = []
    async with httpx.AsyncClient(timeout=30) as http:
        async def tick() -> WindowState:
            seen.append(await watch.tick(http))
            return seen[-1]

        # Live work beyond the window: the watch opens live-only probe slots, the engine
        # queues what it cannot run, and the next reading tells the watch the engine's size.
        burst = [asyncio.create_task(translator.translate(text, "en", source, user=f"u{i}"))
                 for i, (text, source) in enumerate(BURST)]
        await engine.until(lambda d: len(d.running) == 2, "the window's two calls running")
        probing = await tick()
        assert probing.probe == 2 and (policy.window_max, policy.reserve) == (4, 3), probing
        await engine.until(lambda d: len(d.waiting) == 2, "the probes to wait in the engine")
        learned = await tick()
        assert learned.full and (learned.running, learned.waiting) == (2, 2), learned
        assert watch.state.origin == "engine metrics" and watch.state.problem == ""
        assert (watch.state.size, policy.window_max, policy.reserve) == (2, 2, 1)
        engine.set_hold(False)
        answers = await asyncio.wait_for(asyncio.gather(*burst), 60)
        assert [a.text for a in answers] == [text for text, _ in BURST]
        assert engine.count("refused") == 0  # the probes never went past the engine's cap

        # Learned: a document and live messages together put nothing in the engine's queue.
        # Every request is held; the watch reads the engine at each step.
        engine.set_hold(True)
        after = len(seen)
        document = "\n".join(DOCUMENT)
        doc = asyncio.create_task(translator.translate(document, "en", "fr", user="A",
                                                       klass=BULK))
        for i, (text, source) in enumerate(BURST[:3]):
            await engine.until(lambda d: len(d.running) == 1, "a part of the document")
            live = asyncio.create_task(translator.translate(text, "en", source, user="B"))
            await engine.until(lambda d: len(d.running) == 2, "the live message beside it")
            await tick()
            engine.release(2)  # the part and the live message
            assert (await asyncio.wait_for(live, 60)).text == text
            await engine.until(lambda d: len(d.running) == 1, "the document's next part")
            await tick()
            assert not engine.waiting, f"step {i}: {[(r.seq, r.state) for r in engine.requests]}"
        engine.set_hold(False)
        result = await asyncio.wait_for(doc, 60)
        assert result.text == document  # back whole
        await tick()
    during = seen[after:]
    assert all(s.problem == "" for s in during), [s.problem for s in during]  # all read
    assert len(during) == 7 and all(s.waiting == 0 for s in during), [
        (s.running, s.waiting, s.ceiling, s.probe) for s in during]
    assert all(s.ceiling + s.probe == 2 for s in during)
    assert max(s.running for s in during if s.running is not None) == 2  # never above seqs
    assert engine.count("refused") == 0


async def test_a_batch_that_ends_finds_the_lead_queued_in_the_engine() -> None:
    """More live messages than the engine runs: the window fills its four slots and the lead
    puts two more in the engine's own queue. When the batch ends, the engine starts those two
    in its own step, before the app has read one answer or sent one call more (on a GPU, the
    time the app takes to turn a batch over, when the card would otherwise idle)."""
    with running_double(max_num_seqs=4, max_queued=12) as engine:
        settings = engine.settings(checks=False)
        policy = Policy(window_max=4, lead=2, deadline=settings.deadline,
                        reserve=settings.interactive_reserve, ranks=settings.priorities)
        client = ModelClient(settings)
        translator = Translator(settings, client, policy)
        texts = [f"Bonjour, ma commande numéro {i} n'est pas arrivée." for i in range(10)]
        engine.set_hold(True)
        burst = [asyncio.create_task(translator.translate(text, "en", "fr", user=f"u{i}"))
                 for i, text in enumerate(texts)]
        await engine.until(lambda d: (len(d.running), len(d.waiting)) == (4, 2),
                           "four running, the lead of two waiting inside the engine")
        assert (policy.in_flight, policy.queue_length) == (6, 4)
        lead = {r.seq for r in engine.waiting}
        engine.release(4)  # the batch ends
        await engine.until(lambda d: {r.seq for r in d.running} >= lead, "the lead running")
        first_new = min((r.started for r in engine.requests if r.seq > max(lead)
                         and r.started is not None), default=None)
        lead_started = max(r.started or 0 for r in engine.requests if r.seq in lead)
        assert first_new is None or lead_started < first_new  # the engine's own step
        engine.set_hold(False)
        answers = await asyncio.wait_for(asyncio.gather(*burst), 60)
        await client.aclose()
    assert [a.text for a in answers] == texts
    assert engine.count("refused") == 0
    assert engine.count("finished") == len(texts)
