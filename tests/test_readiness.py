"""Messages wait for the model while it warms up (the app's readiness waiter, with a fake probe)."""

import asyncio

from hymt_chat.service.health import Probe
from hymt_chat.service.readiness import Readiness


class Script:
    """A probe that answers the given states in turn (the last one forever)."""

    def __init__(self, *states, root=None):
        self.states = list(states)
        self.calls = 0
        self.root = root

    async def __call__(self):
        self.calls += 1
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        if isinstance(state, Exception):
            raise state
        if isinstance(state, Probe):
            return state
        return Probe(state, self.root if state == "ready" else None)


async def test_waiters_are_released_when_the_model_becomes_ready():
    probe = Script("starting", "starting", "ready", root="/models/demo")
    readiness = Readiness(probe, interval=0.01, ready_interval=10)
    waiters = [asyncio.create_task(readiness.wait_ready(timeout=5)) for _ in range(3)]
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert readiness.ready and readiness.model_root == "/models/demo"
    assert probe.calls == 3  # one poll for everyone, not one per waiting message
    await readiness.stop()


async def test_wait_gives_up_after_the_timeout():
    readiness = Readiness(Script("starting"), interval=0.01)
    assert await readiness.wait_ready(timeout=0.05) is False
    assert readiness.state == "starting"
    await readiness.stop()


async def test_a_broken_probe_counts_as_down_and_polling_goes_on():
    probe = Script(RuntimeError("boom"), "ready")
    readiness = Readiness(probe, interval=0.01)
    assert await readiness.refresh() == "down"
    assert await readiness.wait_ready(timeout=2) is True
    await readiness.stop()


async def test_current_reuses_a_fresh_ready_but_rechecks_anything_else():
    now = [0.0]
    probe = Script("ready")
    readiness = Readiness(probe, clock=lambda: now[0])
    assert await readiness.current(max_age=5) == "ready"
    now[0] = 4.0
    assert await readiness.current(max_age=5) == "ready"
    assert probe.calls == 1
    now[0] = 10.0
    await readiness.current(max_age=5)
    assert probe.calls == 2
    down = Script("down", "ready")
    readiness = Readiness(down, clock=lambda: now[0])
    assert await readiness.current(max_age=5) == "down"
    assert await readiness.current(max_age=5) == "ready"  # a retry right after sees the recovery


async def test_going_down_again_blocks_new_waiters():
    probe = Script("ready", "restarting")
    readiness = Readiness(probe, interval=0.01, ready_interval=0.01)
    assert await readiness.wait_ready(timeout=1)
    await asyncio.sleep(0.05)
    assert readiness.state == "restarting"
    assert await readiness.wait_ready(timeout=0.05) is False
    await readiness.stop()


async def test_a_slow_probe_of_a_model_that_was_ready_is_busy_not_down():
    """A health check past its timeout (the server took the connection and is slow: busy) does
    not refuse messages as "down"; a refused connection does, and so does slowness before the
    server ever answered."""
    readiness = Readiness(Script("ready", Probe("down", slow=True), "down"), interval=10,
                          ready_interval=10)
    assert await readiness.refresh() == "ready"
    assert await readiness.refresh() == "ready"  # slow: still ready
    assert await readiness.refresh() == "down"  # refused
    never = Readiness(Script(Probe("down", slow=True)), interval=10)
    assert await never.refresh() == "down"
