"""A burst in flight survives a real SIGKILL of vLLM and its restart by the real Supervisor.

Real: the session's demo vLLM (2 running + 2 queued), the Supervisor that brings it back, and
the app's Translator, Policy and client. This is the one test of the real kill; the retry and
no-loss logic around it (cut answers, a closed port, a sidecar down at start, 503s, cancel)
runs on the engine double in ``tests/test_overload_double.py``.

It stops the SHARED session server (the machine has too little memory for a second one); the
``restored`` fixture waits until it answers /health again, so later tests find it healthy.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.translator import Translator
from tests.conftest import Server
from tests.support.bursts import Watch, assert_mapped, messages

pytestmark = pytest.mark.slow


@pytest.fixture
def restored(demo_server: Server) -> Iterator[Server]:
    """The shared server, made healthy again (restarted if need be) after the test."""
    yield demo_server
    supervisor = demo_server.supervisor
    if supervisor.state == "stopped":
        supervisor.start(timeout=900)
    deadline = time.monotonic() + 900
    while not (supervisor.state == "ready" and supervisor.healthy()):
        assert time.monotonic() < deadline, "the shared vLLM server did not come back"
        time.sleep(1)


async def test_sigkill_during_a_burst_every_message_is_delivered_after_restart(restored):
    """Six messages at once; vLLM is killed the moment the first answer is back, so the rest
    are in flight or queued. Each is delivered after the restart, each its own."""
    server = restored
    supervisor = server.supervisor
    restarts = supervisor.restarts
    settings = server.settings(temperature=0.0, deadline=900)
    policy = Policy(deadline=900)
    translator = Translator(settings, ModelClient(settings), policy)
    watch = Watch(policy)
    first_answer = asyncio.Event()

    def hook(event: PolicyEvent) -> None:
        if event.kind == "succeeded":
            first_answer.set()

    policy.add_hook(hook)
    sent = messages(6)
    tasks = [asyncio.create_task(translator.translate(text, "en", lang, user=f"agent-{i}"))
             for i, (lang, text, _) in enumerate(sent)]
    await asyncio.wait_for(first_answer.wait(), 600)
    in_flight = policy.in_flight
    os.kill(supervisor.pid, signal.SIGKILL)  # at once: no await between the event and the kill
    assert in_flight >= 1 and watch.delivered < len(sent)
    results = await asyncio.wait_for(asyncio.gather(*tasks), 900)
    assert_mapped(sent, results)  # every message, each its own, none lost to the crash
    assert supervisor.restarts == restarts + 1  # the Supervisor brought the same server back
    assert watch.unavailable_retries >= in_flight  # the calls the kill cut off were retried
