"""Scale-out on real parts, started the way an operator would: ``hymt-chat up --replicas 2
--app-replicas 2``. Two vLLM CPU replicas of the demo model behind the real vllm-router, two
real app processes behind the real HAProxy (Debian's), a real redis-server for the rate
limits they share. The clients are socket.io clients that behave like Chainlit's page (a
websocket through the proxy; on a lost connection socket.io reconnects and the page says
``connection_successful`` again, as Chainlit's frontend does).

The stack starts once for the module (two model loads on 2 cores) and the tests run in file
order: the kills come last, the vLLM replica's before the app replicas'. The one test with a
real browser (Playwright's sync API keeps its own event loop in this thread while the
module's browser is open) is the very last, after every async test.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support import up_stack as up
from tests.support.browser import ANSWER, open_chat, send
from tests.support.postgres import fresh_database
from tests.support.tabs import Tab

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

COOKIE = "hymt-route"  # HAProxy's affinity cookie (HYMT_AFFINITY_COOKIE's default)


@dataclass
class Stack:
    model_port: int  # the router's; the vLLM replicas are on the next two
    app_port: int  # HAProxy's; the app replicas are on the next two
    log: Path
    process: subprocess.Popen[bytes]
    env: dict[str, str]  # what up was started with (the database URL among it)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.app_port}"

    @property
    def replicas(self) -> list[int]:
        return [self.model_port + 1, self.model_port + 2]

    @property
    def apps(self) -> list[int]:
        return [self.app_port + 1, self.app_port + 2]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("scale")
    cache = up.private_cache(tmp / "cache")
    model_port = up.free_block(4)  # the router, 2 replicas, the router's metrics
    app_port = up.free_block(4)  # the proxy, 2 apps, Redis
    env = up.up_env(cache, HYMT_CHECKS="true",
                    # A small KV cache, as the demo server's (conftest.SMALL_KV_CACHE): three
                    # CPU servers run at once on this machine.
                    HYMT_VLLM_ARGS="--max-num-seqs 2 --kv-cache-memory-bytes 512M",
                    HYMT_RATE_LIMIT="3/minute",
                    # A message may wait while a killed replica comes back on a busy host: the
                    # verdict is "nothing lost", never how fast.
                    HYMT_DEADLINE="900",
                    # History and API keys, shared by the app replicas: one real PostgreSQL.
                    HYMT_DATABASE_URL=fresh_database(postgres_url))
    log = tmp / "up.log"
    process = up.start_up(["--replicas", "2", "--app-replicas", "2", "--port", str(model_port),
                           "--app-port", str(app_port)], env, log)
    stack = Stack(model_port, app_port, log, process, env)
    try:
        up.wait_for(lambda: b"model ready at" in log.read_bytes(), 900, "the model replicas",
                    process=process, log=log)
        yield stack
    finally:
        stopped = up.stop_up(process, 90)
        print(log.read_text(errors="replace")[-2000:])
        assert stopped, "up did not stop within 90 s of SIGTERM (its process group was killed)"


def _routed_to(stack: Stack, replica: int) -> str | None:
    """Which replica the proxy sends a browser pinned to *replica* to: HAProxy sets its cookie
    only when it sends it elsewhere (that replica is down), to the one that answered."""
    try:
        answer = httpx.get(f"{stack.url}/hymt/status", timeout=5,
                           headers={"Cookie": f"{COOKIE}=app{replica}"})
    except httpx.HTTPError:
        return None
    return answer.cookies.get(COOKIE) or f"app{replica}"


def _pid_of(pattern: str) -> int:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    pids = [int(p) for p in out.split()]
    assert pids, f"no process matches {pattern!r}"
    return min(pids)


class Browser(Tab):
    """A tab like Chainlit's page: its own client address (X-Forwarded-For, which the app
    trusts from the proxy), optionally the proxy's cookie of one replica, and on a lost
    connection socket.io's reconnect followed by ``connection_successful``."""

    def __init__(self, url: str, address: str, replica: int | None = None) -> None:
        headers = {"X-Forwarded-For": address}
        if replica is not None:
            headers["Cookie"] = f"{COOKIE}=app{replica}"
        super().__init__(url, headers=headers)
        self.connects = 0

        @self.client.on("connect")
        async def connected() -> None:
            self.connects += 1
            if self.connects > 1:  # what Chainlit's frontend does on every connect
                await self.client.emit("connection_successful")

    async def ask(self, number: int) -> str:
        """Send a French sentence carrying *number*; the English answer (never the failure
        note, which repeats the original)."""
        await self.send(f"Bonjour, ma commande numéro {number} est arrivée en retard.")
        said = await self.wait(str(number), "press Retry", timeout=600)  # fail fast: "down"
        assert said == str(number), self.said("press Retry")
        answers = self.said(str(number))
        assert not any("arrivée" in a for a in answers), answers  # not left in French
        return answers[-1]


def test_the_cpu_replicas_run_on_their_own_cores(stack: Stack) -> None:
    """vLLM logs the cores its OpenMP threads are bound to ("local_rank=0, core ids=[0]");
    the two replicas' sets are disjoint (not both bound to core 0)."""
    logs = Path(stack.log).parent / "cache" / "logs"
    bound = []
    for port in stack.replicas:
        found = re.findall(r"core ids=\[([\d, ]*)\]", (logs / f"vllm-{port}.log").read_text(
            errors="replace"))
        assert found, f"no thread binding in the log of the replica on {port}"
        bound.append({int(c) for c in found[-1].split(",") if c.strip()})
    assert all(bound) and not bound[0] & bound[1], bound


def test_the_routers_port_answers_health_and_models(stack: Stack) -> None:
    state = json.loads((Path(stack.log).parent / "cache" / "run" /
                        f"sidecar-{stack.model_port}.json").read_text())
    root = f"http://127.0.0.1:{stack.model_port}"
    assert httpx.get(f"{root}/health", timeout=10).status_code == 200
    models = httpx.get(f"{root}/v1/models", timeout=10,
                       headers={"Authorization": f"Bearer {state['api_key']}"}).json()
    assert models["data"][0]["id"] == "hymt", models
    assert state["state"] == "ready" and state["replicas"] == 2
    assert up.answers(f"{stack.url}/-/proxy-health")


async def test_eight_users_are_all_answered_and_both_replicas_of_each_serve(
        stack: Stack) -> None:
    """Every user answered, and the router and the proxy each spread the work over both of
    their replicas (round robin, least connections). How evenly they spread it is a rate:
    benchmarks/scale_out.py measures it."""
    served = [up.served(p) for p in stack.replicas]
    answered = [up.translated(p) for p in stack.apps]

    async def user(n: int) -> str:
        async with Browser(stack.url, f"10.40.0.{n + 1}") as tab:
            return await tab.ask(4000 + n)

    answers = await asyncio.gather(*(user(n) for n in range(8)))
    assert len(answers) == 8 and all(f"{4000 + n}" in a for n, a in enumerate(answers))
    by_replica = [up.served(p) - b for p, b in zip(stack.replicas, served, strict=True)]
    by_app = [up.translated(p) - b for p, b in zip(stack.apps, answered, strict=True)]
    print(f"vLLM replicas served {by_replica}; app replicas answered {by_app}")
    assert sum(by_replica) >= 8 and min(by_replica) >= 1, by_replica
    assert sum(by_app) == 8 and min(by_app) >= 1, by_app


async def test_a_users_rate_limit_holds_across_the_app_replicas(stack: Stack) -> None:
    """3/minute for the stack; one user, two tabs pinned to different replicas by the
    proxy's cookie: the fourth message is refused by replica 2, counted by both (Redis)."""
    async with Browser(stack.url, "10.3.3.3", replica=1) as one, \
            Browser(stack.url, "10.3.3.3", replica=2) as two:
        before = [up.translated(p) for p in stack.apps]
        await one.ask(3001)
        await one.ask(3002)
        await two.ask(3003)
        assert [up.translated(p) - b for p, b in zip(stack.apps, before, strict=True)] == [2, 1]
        await two.send("Bonjour, ma commande numéro 3004 est arrivée en retard.")
        await two.wait("try again in")
        assert not two.said("3004") or all("arrivée" in a for a in two.said("3004"))


def test_a_room_link_hops_the_phone_to_the_agents_replica_through_the_proxy(
        stack: Stack) -> None:
    """A room lives in the agent's replica; its link carries the agent's cookie (``?r=``). A
    phone that the proxy sent to the other replica gets that cookie and one redirect, and the
    proxy then routes it to the agent's replica (here no room exists, so that one says 404).
    HAProxy must leave the replica's own cookie alone ("preserve")."""
    with httpx.Client(follow_redirects=True, timeout=30) as http:
        http.cookies.set(COOKIE, "app1")
        page = http.get(f"{stack.url}/room/{'x' * 32}?r=app2")
    hop = page.history
    assert [r.status_code for r in hop] == [307], hop
    assert hop[0].headers.get_list("set-cookie") and all(
        f"{COOKIE}=app2" in c for c in hop[0].headers.get_list("set-cookie")
        if c.startswith(f"{COOKIE}=")), hop[0].headers.get_list("set-cookie")
    assert page.status_code == 404 and "hop=1" in str(page.url)
    # HAProxy sets its cookie only when it sends a browser elsewhere than its cookie says.
    assert page.cookies.get(COOKIE) in (None, "app2")


def test_an_api_key_made_once_holds_on_both_replicas_with_one_quota(stack: Stack) -> None:
    """The key is made by the CLI in the PostgreSQL both replicas use; its monthly quota is
    charged by both: the third call, on replica 1, is refused for what replica 2 used."""
    text = "Bonjour, la facture numéro 5501 est payée."
    made = subprocess.run(
        [sys.executable, "-m", "hymt_chat.cli.main", "api-key", "create", "shared",
         "--chars-per-month", str(2 * len(text) + 5)],
        cwd=up.ROOT, env=stack.env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()

    def call(replica: int) -> httpx.Response:
        return httpx.post(f"{stack.url}/libretranslate/translate", timeout=300,
                          headers={"Cookie": f"{COOKIE}=app{replica}"},
                          json={"q": text, "source": "fr", "target": "en", "api_key": key})

    first, second = call(1), call(2)
    assert first.status_code == second.status_code == 200, (first.text, second.text)
    assert "5501" in first.json()["translatedText"] and "5501" in second.json()["translatedText"]
    third = call(1)  # a spent quota: LibreTranslate's 400 "Invalid request: …" (no 456 there)
    assert third.status_code == 400 and "quota" in third.text.lower(), third.text
    listed = subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "api-key", "list"],
                            cwd=up.ROOT, env=stack.env, capture_output=True, text=True, timeout=60)
    quota = f"{2 * len(text)} / {2 * len(text) + 5}"  # both replicas' use, in one row
    assert listed.returncode == 0 and quota in listed.stdout, listed.stdout


# Its own waits (up to 300 s for the victim's first request, the burst, up to 600 s for the
# restart: a model load on a busy 2-core host) are the bounds; the suite's 600 s per test would
# cut them short.
@pytest.mark.timeout(1500)
async def test_a_vllm_replica_killed_mid_burst_costs_no_message(stack: Stack) -> None:
    """SIGKILL (not a clean stop) of one replica while it generates: the router's retry and
    circuit breaker, and the app's retries behind them, deliver every message."""
    victim = stack.replicas[1]
    pid = _pid_of(f"api_server.*--port {victim}( |$)")

    async def user(n: int) -> str:
        async with Browser(stack.url, f"10.12.0.{n + 1}") as tab:
            return await tab.ask(1200 + n)

    burst = asyncio.gather(*(user(n) for n in range(6)))
    deadline = time.monotonic() + 300
    while await asyncio.to_thread(up.running, victim) == 0:
        assert time.monotonic() < deadline, "the victim never got a request"
        await asyncio.sleep(0.2)
    os.killpg(pid, signal.SIGKILL)
    answers = await burst
    assert all(f"{1200 + n}" in a for n, a in enumerate(answers)), answers
    # Its supervisor (inside up) brings it back; the router's own was never moved to restart
    # the router (its /health is 503 while a replica is down: /liveness is watched).
    await asyncio.to_thread(up.wait_for, lambda: up.answers(f"http://127.0.0.1:{victim}/health"),
                            600, "the killed replica's restart",
                            process=stack.process, log=stack.log)
    router_log = stack.log.parent / "cache" / "logs" / f"router-{stack.model_port}.log"
    assert "restarting it" not in router_log.read_text(errors="replace")


async def test_a_killed_app_replica_s_browsers_reconnect_to_the_other(stack: Stack) -> None:
    first, second = stack.apps
    tabs = [Browser(stack.url, f"10.7.0.{n + 1}", replica=1) for n in range(3)]
    for tab in tabs:
        await tab.__aenter__()
    try:
        on_first = up.translated(first)
        for n, tab in enumerate(tabs):
            await tab.ask(7000 + n)
        assert up.translated(first) - on_first == 3  # the cookie pinned them to replica 1
        on_second = up.translated(second)
        os.killpg(_pid_of(f"chainlit run .*--port {first}( |$)"), signal.SIGKILL)
        deadline = time.monotonic() + 120
        while not all(t.connects >= 2 and t.client.connected for t in tabs):
            assert time.monotonic() < deadline, [t.connects for t in tabs]
            await asyncio.sleep(0.2)
        for n, tab in enumerate(tabs):
            await tab.ask(7100 + n)  # sent after the kill, through the proxy
        assert up.translated(second) - on_second == 3  # replica 2 answered them
    finally:
        for tab in tabs:
            await tab.__aexit__()
    # Its supervisor brings it back, and the proxy routes to it again (the browser test next
    # needs both replicas).
    await asyncio.to_thread(up.wait_for, lambda: _routed_to(stack, 1) == "app1", 300,
                            "the killed app replica back in the proxy's rotation",
                            process=stack.process, log=stack.log)


def test_a_real_browser_whose_replica_dies_goes_on_on_the_other(stack: Stack,
                                                               browser) -> None:
    """Chainlit's own page in chromium, through HAProxy: it answers, its replica (named by the
    proxy's cookie) is SIGKILLed, the page reconnects by itself, and the next message is
    answered by the other replica."""
    page = open_chat(browser, stack.url)
    try:
        send(page, "Bonjour, ma commande numéro 8001 est arrivée en retard.")
        page.locator(ANSWER, has_text="8001").wait_for(timeout=300_000)
        cookie = {c["name"]: c["value"] for c in page.context.cookies()}[COOKIE]
        mine = stack.apps[int(cookie.removeprefix("app")) - 1]
        other = next(p for p in stack.apps if p != mine)
        on_other = up.translated(other)
        # The proxy closes the page's websocket and the page opens a new one through it, to
        # the other replica: wait for that socket's first word from the server.
        with page.expect_websocket(timeout=120_000) as opened:
            os.killpg(_pid_of(f"chainlit run .*--port {mine}( |$)"), signal.SIGKILL)
        opened.value.wait_for_event("framereceived", timeout=120_000)
        send(page, "Bonjour, ma commande numéro 8002 est arrivée en retard.")
        # Until the page has its connection back it does not send, and it keeps the text in
        # the box (nothing typed is lost): like a user, press Enter again until it goes.
        box = page.locator("#chat-input")
        for _ in range(120):
            if "8002" not in (box.input_value() if box.evaluate("e => 'value' in e")
                              else box.inner_text()):
                break
            page.wait_for_timeout(1000)
            box.press("Enter")
        else:
            raise AssertionError("the page never sent the message kept in its box")
        page.locator(ANSWER, has_text="8002").wait_for(timeout=300_000)
        assert up.translated(other) - on_other == 1
    finally:
        page.close()
