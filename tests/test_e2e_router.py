"""vllm-router (the real Rust router, PyPI ``vllm-router``) over two real vLLM CPU replicas of
the demo model: requests reach both, and a replica SIGKILLed mid-burst costs no translation.

Two extra vLLM servers are heavy on 2 cores: both are started once for this module, side by
side, and the tests are kept short."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import openai
import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint
from hymt_chat.sidecar.launch import plan_launch
from hymt_chat.sidecar.router import plan_router
from hymt_chat.sidecar.supervisor import Supervisor
from tests.conftest import free_port

pytestmark = pytest.mark.slow

KEY = "router-test-key"  # one key for both replicas: the router sends it to whichever it picks
SENTENCES = ["Bonjour, je voudrais réserver une table pour ce soir.",
             "Merci beaucoup pour votre aide rapide.",
             "Le colis est arrivé avec deux jours de retard.",
             "Pourriez-vous m'envoyer la facture, s'il vous plaît ?"]


@dataclass
class Cluster:
    replicas: list[tuple[Endpoint, Supervisor]]
    router: Endpoint

    def settings(self) -> Settings:
        return Settings(base_url=self.router.base_url, api_key=KEY, model=self.router.model)


def _served(endpoint: Endpoint) -> float:
    """Requests this replica finished (its own vllm:request_success_total)."""
    text = httpx.get(f"{endpoint.root}/metrics", timeout=10).text
    return sum(float(m) for m in re.findall(
        r"^vllm:request_success_total\{[^}]*\} ([0-9.e+]+)$", text, re.MULTILINE))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("router")
    replicas: list[tuple[Endpoint, Supervisor]] = []
    for i in range(2):
        settings = Settings(profile="cpu", port=free_port(), api_key=KEY, base_url=None,
                            vllm_args="--max-num-seqs 2 --no-disable-log-stats")
        launch = plan_launch(settings)
        replicas.append((launch.endpoint, Supervisor(
            launch.spec, health_url=f"{launch.endpoint.root}/health",
            log_path=logs / f"vllm-{i}.log")))
    errors: list[BaseException] = []

    def start(supervisor: Supervisor) -> None:
        try:
            supervisor.start(timeout=900)
        except BaseException as err:  # noqa: BLE001 - re-raised below, in the test's thread
            errors.append(err)

    threads = [threading.Thread(target=start, args=(s,)) for _, s in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    router_sup = None
    try:
        if errors:
            raise errors[0]
        plan = plan_router([e.root for e, _ in replicas], vllm_python=str(
            Settings().vllm_python), port=free_port(), metrics_port=free_port(),
            api_key=KEY, health_interval=2)
        router_sup = Supervisor(plan.spec, health_url=f"{plan.root}/health",
                                log_path=logs / "router.log")
        router_sup.start(timeout=120)
        first = replicas[0][0]
        yield Cluster(replicas, Endpoint(f"{plan.root}/v1", KEY, first.model))
    finally:
        if router_sup is not None:
            router_sup.stop()
        for _, supervisor in replicas:
            supervisor.stop()


def test_the_routers_port_answers_models_and_health(cluster: Cluster) -> None:
    root = cluster.router.base_url.removesuffix("/v1")
    assert httpx.get(f"{root}/health", timeout=10).status_code == 200
    models = httpx.get(f"{cluster.router.base_url}/models", timeout=10,
                       headers={"Authorization": f"Bearer {KEY}"}).json()
    assert "data" in models, models
    assert models["data"][0]["id"] == cluster.router.model


async def test_requests_reach_both_replicas(cluster: Cluster) -> None:
    before = [_served(e) for e, _ in cluster.replicas]
    client = openai.AsyncOpenAI(base_url=cluster.router.base_url, api_key=KEY,
                                max_retries=0)
    try:
        answers = await asyncio.gather(*(client.chat.completions.create(
            model=cluster.router.model, max_tokens=8, temperature=0,
            messages=[{"role": "user", "content": f"Say {n}."}]) for n in range(8)))
    finally:
        await client.close()
    assert all(a.choices[0].message.content for a in answers)
    served = [_served(e) - b for (e, _), b in zip(cluster.replicas, before, strict=True)]
    assert sum(served) == 8 and min(served) >= 1, served


async def test_with_a_replica_killed_every_translation_is_still_answered(
        cluster: Cluster) -> None:
    """SIGKILL, not a clean stop, and no wait for the router's health check: its circuit
    breaker (opened by the first failed send, ``plan_router``) sends the retry to the survivor.
    (With the router's default threshold one of these came back as HTTP 500.)"""
    settings = cluster.settings()
    translator = Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))
    endpoint, victim = cluster.replicas[1]
    survivor = cluster.replicas[0][0]
    victim.request_stop()  # no restart: the replica stays dead for the rest of the test
    os.killpg(victim.pid, signal.SIGKILL)
    async with httpx.AsyncClient(timeout=2) as http:
        with pytest.raises(httpx.HTTPError):
            await http.get(f"{endpoint.root}/health")  # it really is gone
    before = _served(survivor)
    results = await asyncio.gather(*(translator.translate(SENTENCES[n % 4], "en", "fr")
                                     for n in range(8)))
    assert all(r.text.strip() for r in results)
    assert _served(survivor) - before == 8  # all on the survivor
