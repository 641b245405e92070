"""Live messages first: the app's request classes, its reserve and its retries against the
engine double.

Real: the app's :class:`Translator`, :class:`Policy` (classes, reserve, retries, timeouts) and
:class:`ModelClient` over real HTTP, with the priority each call carries in its body. The double
(``tests/support/engine_double.py``) is the engine: it holds a document's parts for as long as
the test needs, never ends a request the test wants timed out, and cuts its answers as a killed
engine does (``tests/support/restartable.py``). That the real vLLM serves a waiting request of
higher priority first is ``tests/test_engine_contract.py``'s (real vLLM and double); a real
SIGKILL and restart is ``tests/test_e2e_scale.py``'s.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from tests.support.engine_double import EngineDouble, Request, echo_source
from tests.support.phrasebook import phrasebook
from tests.support.restartable import Restartable

DOCUMENT = [
    "Le colis est arrivé avec deux jours de retard et la boîte était abîmée.",
    "J'ai contacté le service client trois fois sans réponse claire.",
    "Le suivi indiquait que le paquet était encore en transit.",
    "Je voudrais savoir si un remboursement partiel est possible.",
    "La facture ne mentionne pas la garantie de deux ans promise.",
    "Pourriez-vous m'envoyer une facture corrigée rapidement ?",
    "Je reste disponible par téléphone tous les jours de neuf à dix-huit heures.",
    "Merci d'avance pour votre aide et pour votre patience.",
]
LATE = "Le colis est arrivé en retard."
DAMAGED = "La boîte était abîmée et le reçu manquait."
ENGLISH = phrasebook({LATE: {"en": "The parcel arrived late."},
                      DAMAGED: {"en": "The box was damaged and the receipt was missing."}})


def _app_like(server: EngineDouble | Restartable, **overrides: object
              ) -> tuple[Translator, Policy]:
    """What the app builds for this server: a window of its 2 running slots, 1 kept live."""
    settings = server.settings(window_max=2, **overrides)
    policy = Policy(window_max=2, deadline=settings.deadline,
                    reserve=settings.interactive_reserve, ranks=settings.priorities)
    return Translator(settings, ModelClient(settings), policy), policy


def _answered(requests: Iterable[Request]) -> Counter[str]:
    """Source texts the engine answered, with how many times."""
    return Counter(echo_source(r.prompt) for r in requests if r.state == "finished")


async def test_a_live_message_does_not_wait_behind_a_document(engine: EngineDouble):
    """A document's parts are held in the engine: while one generates, a live message gets
    the slot kept for live work, is answered, and never waited in the app's queue or the
    engine's. (Answer checks off: the double echoes, and the checks' repair call would be
    another request to account for.)"""
    translator, policy = _app_like(engine, checks=False)
    bulk = policy.rank(BULK)
    engine.set_hold(lambda req: req.priority == bulk)
    lines = DOCUMENT * 2  # 16 parts
    doc = asyncio.create_task(translator.translate("\n".join(lines), "en", "fr", user="A",
                                                   klass=BULK))
    await engine.until(lambda d: len(d.running) == 1, "the document's first part")
    engine.release(1)
    await engine.until(lambda d: d.count("finished") == 1 and len(d.running) == 1,
                       "its first part done, the second generating")
    assert policy.queue_length == 0 and policy.in_flight == 1  # one part at a time: its share
    events: list[PolicyEvent] = []
    live = await translator.translate("Bonjour, où est mon colis JD20240611 ?", "en", "fr",
                                      user="B", on_event=events.append)
    assert "JD20240611" in live.text
    assert not [e for e in events if e.kind == "queued" and e.ahead > 0]  # never waited
    live_request = engine.requests[-1]
    assert live_request.priority < bulk and live_request.state == "finished"
    # It overtook a part that still generates, and waited for nothing in the engine either.
    assert [r.priority for r in engine.running] == [bulk] and not engine.waiting
    assert not doc.done()
    engine.set_hold(False)
    result = await asyncio.wait_for(doc, 60)
    assert result.text.split("\n") == lines  # the document still finished, whole, in order
    assert engine.count("finished") == len(lines) + 1


async def test_a_segment_whose_request_times_out_is_retried_not_fatal(engine: EngineDouble):
    """A request that never ends times out on the client's own timeout (a tiny floor, a
    decode rate no engine reaches): whatever the host's speed, the first try cannot answer.

    Two sentences are retried as two halves; one sentence is retried whole, each try given
    twice the time (the doubling itself: ``tests/test_faults.py``,
    ``test_a_stalled_server_is_retried_with_longer_timeouts_until_the_deadline``). The engine
    sees each timed-out request aborted: the client hung up, nothing generates on. (Answer
    checks off: they are not this test's subject, and building a pair's value patterns costs
    seconds of CPU before the first call.)"""
    engine.answer = ENGLISH
    translator, policy = _app_like(engine, timeout_floor=0.3, decode_rate=1e6, checks=False)
    engine.set_hold(lambda req: LATE in req.prompt and DAMAGED in req.prompt)  # the whole
    events: list[PolicyEvent] = []
    result = await translator.translate(f"{LATE} {DAMAGED}", "en", "fr", on_event=events.append)
    retries = [e.error for e in events if e.kind == "retrying"]
    assert "timeout (split)" in retries
    assert result.text == "The parcel arrived late. The box was damaged and the receipt was missing."
    assert engine.requests[0].state == "aborted"

    short, _ = _app_like(engine, timeout_floor=0.05, decode_rate=1e6, checks=False)
    first = len(engine.requests)
    engine.set_hold(lambda req: req.seq == first)  # its first try never ends
    events.clear()
    one = await short.translate(LATE, "en", "fr", on_event=events.append)
    assert [e.error for e in events if e.kind == "retrying"].count("timeout") >= 1
    assert one.text == "The parcel arrived late."
    assert engine.requests[first].state == "aborted"
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_an_engine_killed_mid_document_finishes_without_resending_done_parts():
    """Three parts answered, the fourth generating, then the engine dies (its answer cut, the
    port closed) and a new one starts at the same address: the document finishes, each part
    answered once, and no part that was done is sent again. (Checks off: their repair of a
    part would be a second answer for it, which is what this test counts.)"""
    with Restartable(hold=True) as sidecar:
        first = sidecar.start()
        translator, _ = _app_like(sidecar, checks=False)
        doc = asyncio.create_task(translator.translate("\n".join(DOCUMENT), "en", "fr",
                                                       user="A", klass=BULK))
        for done in range(3):
            await first.until(lambda d, n=done: d.count("finished") == n and len(d.running) == 1,
                              f"part {done + 1} generating")
            first.release(1)
        await first.until(lambda d: d.count("finished") == 3 and len(d.running) == 1,
                          "three parts done, the fourth generating")
        done_before = set(_answered(first.requests))
        cut = echo_source(first.running[0].prompt)
        await asyncio.to_thread(sidecar.kill)
        second = await asyncio.to_thread(sidecar.start)
        second.set_hold(False)
        result = await asyncio.wait_for(doc, 60)
    assert result.text.split("\n") == DOCUMENT
    assert first.count("reset") >= 1 and cut not in done_before
    answered = _answered(first.requests) + _answered(second.requests)
    assert answered == Counter(DOCUMENT)  # each part answered once
    assert not done_before & {echo_source(p) for p in second.prompts}  # done ones never re-sent
    assert cut in _answered(second.requests)  # the cut one was sent again, and answered
