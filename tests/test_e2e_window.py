"""The window learned from the real engine's /metrics: the session's demo vLLM (started with
``--max-num-seqs 2 --max-num-queued-reqs 4``) reached by URL only, as ``HYMT_BASE_URL`` alone
would: no window setting, no profile.

Nothing here is faked: the page is vLLM's own, read over HTTP by the watch the app builds
(``build_watch``, the same as ``watch_window``'s), and the calls are real translations. The
watch's loop is the test's (so that it can keep every reading), on the real clock; its faults
(missing, slow, lying pages, restarts) are in test_window_faults.py.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.engine.window import WindowState, WindowWatch, build_watch
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.text.values import prepare_values
from tests.test_e2e_priority import DOCUMENT

pytestmark = pytest.mark.slow

LINES = [("Bonjour, ma commande n'est pas arrivée.", "fr"),
         ("Hallo, wann kommt mein Paket?", "de"),
         ("Hola, ¿puedo cambiar la dirección?", "es"),
         ("Buongiorno, vorrei annullare l'ordine.", "it"),
         ("Olá, recebi o produto errado.", "pt"),
         ("Goedendag, mijn pakket is beschadigd.", "nl")]
# The burst that teaches the window: answers of some 40 tokens, so that two requests wait in
# vLLM for seconds at a time, not the fraction of one that a one-liner's answer takes (CI once
# read the page all through a burst of one-liners and never while one waited: a busy API
# server's page lags, and the watch rightly drops a page that counts fewer than the app has in
# flight).
BURST = [("Bonjour, ma commande n'est pas arrivée. Le suivi indique qu'elle est bloquée à "
          "l'entrepôt depuis lundi. Pouvez-vous vérifier et me dire quand elle partira ?", "fr"),
         ("Hallo, mein Paket sollte gestern ankommen. Die Sendungsverfolgung zeigt seit drei "
          "Tagen keinen neuen Eintrag. Können Sie bitte beim Versanddienst nachfragen?", "de"),
         ("Hola, quiero cambiar la dirección de entrega de mi pedido. Me mudé la semana "
          "pasada y el paquete todavía no ha salido. ¿Es posible hacerlo hoy?", "es"),
         ("Buongiorno, vorrei annullare l'ordine che ho fatto ieri sera. Ho sbagliato la "
          "taglia delle scarpe e preferisco ordinarle di nuovo. Grazie mille.", "it"),
         ("Olá, recebi o produto errado no meu pedido. Encomendei uma camisola azul e "
          "chegou uma verde de outro tamanho. Como posso fazer a troca?", "pt"),
         ("Goedendag, mijn pakket is beschadigd aangekomen. De doos was open en er ontbreekt "
          "een van de twee kabels. Kunt u een nieuwe sturen?", "nl")]


def _app(server) -> tuple[Translator, Policy, WindowWatch]:
    """What the app builds for a server given by URL alone (get_policy, watch_window)."""
    settings = server.settings(temperature=0.0)
    assert settings.window_max is None and settings.profile == "auto"
    slots = engine_slots(settings)
    policy = Policy(window_max=slots, deadline=settings.deadline,
                    reserve=settings.interactive_reserve, ranks=settings.priorities)
    return (Translator(settings, ModelClient(settings), policy), policy,
            build_watch(settings, policy))


async def _watching(watch: WindowWatch, seen: list[WindowState], stop: asyncio.Event) -> None:
    async with httpx.AsyncClient(timeout=30) as http:  # a busy 2-core engine can be slow
        while not stop.is_set():
            seen.append(await watch.tick(http))
            await asyncio.sleep(0.2)


async def test_the_window_learns_the_engines_two_slots_and_nothing_waits_in_vllm(demo_server):
    translator, policy, watch = _app(demo_server)
    assert (policy.window_max, watch.state.origin) == (2, "safe default")
    for _, source in BURST:  # each pair's first segment builds its value patterns (1-2 s, one
        prepare_values(source, "en")  # build at a time): done first, the burst is a burst
    seen: list[WindowState] = []
    stop = asyncio.Event()
    watching = asyncio.create_task(_watching(watch, seen, stop))
    try:
        # Live work beyond the window: the watch probes with live-only slots until requests
        # wait inside vLLM, which tells it the engine's size.
        burst = [translator.translate(text, "en", source, user=f"u{i}")
                 for i, (text, source) in enumerate(BURST)]
        answers = await asyncio.gather(*burst)
        assert all(a.text.strip() for a in answers)
        learned = [s for s in seen if s.full]
        assert learned, [(s.running, s.waiting, s.probe, s.problem) for s in seen]
        assert watch.state.origin == "engine metrics" and watch.state.problem == ""
        assert (watch.state.size, policy.window_max, policy.reserve) == (2, 2, 1)
        assert max(s.running for s in seen if s.running is not None) == 2  # never above seqs

        # Learned: a document and live messages together put nothing in vLLM's queue.
        after = len(seen)
        document = "\n".join(DOCUMENT)
        doc = asyncio.create_task(translator.translate(document, "en", "fr", user="A",
                                                       klass=BULK))
        for text, source in LINES[:3]:
            await translator.translate(text, "en", source, user="B")
        result = await doc
        assert result.text.count("\n") == document.count("\n")  # back whole
    finally:
        stop.set()
        await watching
    during = seen[after:]
    assert during and all(s.waiting == 0 for s in during if s.waiting is not None), [
        (s.running, s.waiting, s.ceiling, s.probe) for s in during]
    assert all(s.ceiling + s.probe == 2 for s in during)
