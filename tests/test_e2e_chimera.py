"""Best quality (Chimera) through the real client, policy and translator, against the engine
double playing both roles: the candidates' model and the fusion model.

The double's answers are the cases, every run: candidates that differ (so fusion is needed),
a fused answer, and for the refusals

* a wrong API key on the fusion endpoint (the same server): the double answers 401, as vLLM
  does for a key it was not given;
* a closed port as the fusion server, configured through HYMT_FUSION_BASE_URL: the connection
  is refused;
* candidates the server cannot admit: a request with n=6 counts as 6 against the admission cap
  of 4, and the double answers 503, as vLLM does (``tests/support/engine_double.py``).

The same logic with a scripted client in-process is ``tests/test_chimera.py``; here the
requests cross real HTTP and the test reads what the engine got (``n``, the fusion prompt).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from hymt_chat.engine import chimera
from hymt_chat.engine.chimera import BestTranslation, chimera_available, translate_best
from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.lang.detect import detect_language
from hymt_chat.sidecar.endpoint import Endpoint
from tests.support.engine_double import EngineDouble
from tests.support.phrasebook import source_text
from tests.support.ports import free_port

FRENCH = ("Bonjour, je voudrais réserver une table pour deux personnes ce soir, et si possible "
          "près de la fenêtre, s'il vous plaît.")
SPANISH = "Disculpe, ¿dónde está la estación de tren más cercana?\nGracias por su ayuda."
THANKS = "Merci beaucoup pour votre aide."
FUSION_PROMPT = "Analyze the following multiple"
# Candidates that differ, as sampled ones do (the first is also the standard answer), and
# what the fusion model makes of them.
CANDIDATES = {
    FRENCH: ["Hello, I would like to book a table for two people tonight, and if possible "
             "near the window, please.",
             "Hello, I would like to reserve a table for two tonight, near the window if "
             "possible, please.",
             "Good evening, I'd like to book a table for two this evening, by the window if "
             "possible, please."],
    "Disculpe, ¿dónde está la estación de tren más cercana?": [
        "Excuse me, where is the nearest train station?",
        "Excuse me, where's the closest train station?"],
    "Gracias por su ayuda.": ["Thank you for your help.", "Thanks for your help."],
    THANKS: ["Thank you very much for your help.", "Many thanks for your help."],
}
FUSED = {FRENCH: "Hello, I would like to book a table for two tonight, near the window if "
                 "possible, please."}


def answers() -> Callable[[str], str]:
    """The double's answer function: candidates in turn for a text, the fused one for a
    fusion prompt (asked once per choice of a request for n)."""
    turns = {text: itertools.cycle(options) for text, options in CANDIDATES.items()}

    def answer(prompt: str) -> str:
        if prompt.startswith(FUSION_PROMPT):
            return next(fused for text, fused in FUSED.items() if text in prompt)
        return next(turns[source_text(prompt)])

    return answer


@pytest.fixture
def double(engine: EngineDouble) -> EngineDouble:
    engine.answer = answers()
    return engine


class SpyClient(ModelClient):
    """A real client that remembers what it was asked (and how many answers)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked: list[tuple[str, int]] = []

    async def complete(self, prompt, *, max_tokens, n=1, **kwargs):
        self.asked.append((prompt, n))
        return await super().complete(prompt, max_tokens=max_tokens, n=n, **kwargs)

    @property
    def fusion_prompts(self) -> list[str]:
        return [p for p, _ in self.asked if p.startswith(FUSION_PROMPT)]


def _translator(engine: EngineDouble, **overrides) -> tuple[Translator, SpyClient, Policy]:
    # Answer checks off: not this test's subject (tests/test_e2e_checks.py), and a language
    # pair's value patterns cost seconds of CPU before its first call.
    settings = engine.settings(deadline=600, checks=False, **overrides)
    client = SpyClient(settings)
    # Window 8, wider than the demo server runs (what engine_slots gave a server reached by URL
    # before it learned the engine's size): the window's AIMD cut after a 503 must outlast the
    # plain translation's success; from the learned window of 2, one success restores it.
    policy = Policy(window_max=8, deadline=settings.deadline)
    return Translator(settings, client, policy), client, policy


def _english(result: BestTranslation) -> None:
    assert result.text.strip()
    assert detect_language(result.text) == "en", result.text


async def test_best_quality_fuses_candidates_from_one_request(double: EngineDouble):
    translator, client, policy = _translator(double)
    assert chimera_available(translator.settings, demo=True)
    result = await translate_best(translator, FRENCH, "en", "fr", fusion=client,
                                  fusion_policy=policy)
    assert result.fused == 1 and not result.downgraded, result.outcomes
    assert result.text == FUSED[FRENCH]
    candidates, fusion = double.requests  # one request for the candidates, one to fuse them
    assert candidates.n == 4 and fusion.n == 1
    assert fusion.prompt.startswith(FUSION_PROMPT) and "1. ```" in fusion.prompt
    assert all(c in fusion.prompt for c in CANDIDATES[FRENCH])  # every distinct candidate
    assert chimera.best_note(result).startswith("Best quality: fused 3 candidate")


async def test_downgrades_to_the_best_candidate_when_the_fusion_key_is_refused(
        double: EngineDouble):
    translator, client, policy = _translator(double)
    endpoint = client.endpoint
    wrong_key = SpyClient(translator.settings,
                          Endpoint(endpoint.base_url, "not-the-key", endpoint.model))
    result = await translate_best(translator, SPANISH, "en", "es", fusion=wrong_key,
                                  fusion_policy=Policy(retries=False))
    assert result.translation.segments == 2 and result.text.count("\n") == 1  # lines kept
    assert result.fusion_calls == len(wrong_key.fusion_prompts) == 2  # each part asked it
    assert not [r for r in double.requests if r.prompt.startswith(FUSION_PROMPT)]  # refused
    assert [o.kind for o in result.outcomes] == ["medoid", "medoid"]
    assert "the fusion server refused the API key (HYMT_FUSION_API_KEY)" in result.reasons
    assert "Best quality unavailable" in chimera.best_note(result)
    _english(result)


async def test_downgrades_when_the_configured_fusion_server_is_down(
        double: EngineDouble):
    closed = free_port()  # nothing listens there: connection refused
    translator, client, policy = _translator(
        double, fusion_base_url=f"http://127.0.0.1:{closed}/v1", fusion_model="chimera")
    # No fusion client or policy given: the translator's route (own, retry-free policy).
    result = await translate_best(translator, FRENCH, "en", "fr")
    assert result.fusion_calls == 1 and result.outcomes[0].kind == "medoid"
    assert result.reasons == ("the fusion model is not reachable",)
    assert result.text in CANDIDATES[FRENCH]
    assert [r.n for r in double.requests] == [4]  # the candidates came; no fusion reached it


async def test_candidates_the_server_cannot_admit_give_the_standard_translation(
        double: EngineDouble):
    # n=6 counts as 6 against the cap of 4: refused with a 503 every time, until Best
    # quality's wait is over (short here; the verdict is the same at any length).
    translator, client, policy = _translator(double, chimera_candidates=6, chimera_wait=0.5)
    result = await translate_best(translator, FRENCH, "en", "fr", fusion=client,
                                  fusion_policy=policy)
    assert [n for _, n in client.asked][0] == 6 and client.asked[-1][1] == 1
    assert {r.state for r in double.requests if r.n == 6} == {"refused"}
    assert result.outcomes[0].kind == "plain" and result.reasons == (chimera.BUSY,)
    assert not client.fusion_prompts
    _english(result)
    # the 503 cut the window: the next Best quality message does not even ask for candidates
    assert policy.window < policy.window_max
    client.asked.clear()
    again = await translate_best(translator, THANKS, "en", "fr",
                                 fusion=client, fusion_policy=policy)
    assert [n for _, n in client.asked] == [1] and again.reasons == (chimera.BUSY,)
