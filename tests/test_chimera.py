"""Best quality (Chimera) without a server: candidates, medoid, fusion, and every downgrade."""

from __future__ import annotations

import pytest

from hymt_chat.engine import chimera
from hymt_chat.engine.chimera import (
    best_note,
    chimera_available,
    chimera_segment_budget,
    dedupe,
    fusion_endpoint,
    load_reason,
    medoid,
    similarity,
    translate_best,
)
from hymt_chat.engine.fusion import FusionRoute
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.prompts import build_chimera_prompt, build_prompt
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import ModelBusyError, ModelError, ModelUnavailableError
from hymt_chat.modes import wording
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.endpoint import Endpoint
from tests.support.sdk_errors import status_error

SOURCE = "Bonjour, je voudrais réserver une table pour deux personnes ce soir."
CANDIDATES = [
    "Hello, I would like to book a table for two people tonight.",
    "Hello, I'd like to reserve a table for two tonight.",
    "Hello, I would like to book a table for two people tonight.",
    "Good morning, I want a table for two persons this evening.",
]
FUSED = "Hello, I would like to reserve a table for two people tonight."


class FakeClient:
    """Records every call; answers from a script (a list, or an exception to raise)."""

    def __init__(self, candidates=None, plain="Plain translation.", fused=FUSED,
                 fusion_error=None, candidate_error=None, base_url="http://x/v1"):
        self.endpoint = Endpoint(base_url, "k", "m")
        self.calls: list[dict] = []
        self.candidates = CANDIDATES if candidates is None else candidates
        self.plain, self.fused = plain, fused
        self.fusion_error, self.candidate_error = fusion_error, candidate_error

    async def complete(self, prompt, *, max_tokens, n=1, temperature=None, top_p=None,
                       model=None, source="", **_request):
        fusion = prompt.startswith("Analyze the following multiple")
        self.calls.append(dict(prompt=prompt, n=n, temperature=temperature, top_p=top_p,
                               fusion=fusion, max_tokens=max_tokens))
        if fusion:
            if self.fusion_error:
                raise self.fusion_error
            return [self.fused]
        if n > 1:
            if self.candidate_error:
                raise self.candidate_error
            return list(self.candidates[:n]) + [self.candidates[-1]] * (n - len(self.candidates))
        return [self.plain]

    @property
    def fusion_calls(self):
        return [c for c in self.calls if c["fusion"]]


def _setup(client: FakeClient, fusion: FakeClient | None = None, **overrides):
    settings = Settings(base_url="http://x/v1", fusion_model="chimera", **overrides)
    policy = Policy(window_max=engine_slots(settings), retries=False)
    translator = Translator(settings, client, policy)  # type: ignore[arg-type]
    return translator, (fusion or client), policy


async def _best(client, fusion=None, text=SOURCE, fusion_policy=None, **overrides):
    translator, fusion_client, policy = _setup(client, fusion, **overrides)
    return await translate_best(translator, text, "en", "fr", fusion=fusion_client,
                                fusion_policy=fusion_policy or policy)


# --- candidates ----------------------------------------------------------------------------


def test_dedupe_merges_whitespace_variants_counts_them_and_keeps_order():
    got = dedupe(["a  b", "c", "a b ", "", "  ", "C", "a b"])
    assert got == [("a  b", 3), ("c", 1), ("C", 1)]


def test_similarity_is_one_for_equal_zero_for_disjoint_and_symmetric():
    assert similarity("hello world", "hello  world") == 1.0
    assert similarity("abc", "xyz") == 0.0
    a, b = "le chat noir", "le chien noir"
    assert similarity(a, b) == similarity(b, a)
    assert 0 < similarity(a, b) < 1


def test_medoid_is_the_consensus_not_the_outlier():
    assert CANDIDATES[medoid(CANDIDATES)] == CANDIDATES[0]
    # the odd one out (different wording) is never chosen, whatever its position
    assert medoid(list(reversed(CANDIDATES))) != 0


def test_medoid_counts_duplicates():
    # "B" alone is as similar to A as to C, but A came back three times
    items = [("the cat sat", 1), ("a cat sat down", 3), ("the cat sat down", 1)]
    assert medoid(items) == 1


def test_medoid_ties_go_to_the_first_and_it_works_for_chinese():
    assert medoid(["same", "same"]) == 0
    zh = ["我想订一张两个人的桌子。", "我想预订一张两人桌。", "我想订一张两个人的桌子。", "今天天气很好。"]
    assert zh[medoid(zh)] == zh[0]
    with pytest.raises(ValueError):
        medoid([])


def test_segment_budget_leaves_room_for_all_candidates():
    assert chimera_segment_budget(4096, 4) == 420
    assert chimera_segment_budget(8192, 4) < 2000
    assert chimera_segment_budget(4096, 6) < chimera_segment_budget(4096, 4)
    assert chimera_segment_budget(200, 16) == 16  # never below a usable size


# --- configuration -------------------------------------------------------------------------


def test_available_only_with_a_fusion_model_or_url_or_the_demo():
    assert not chimera_available(Settings(base_url="http://x/v1"))
    assert chimera_available(Settings(base_url="http://x/v1", fusion_model="chimera"))
    assert chimera_available(Settings(base_url="http://x/v1", fusion_base_url="http://y/v1"))
    assert chimera_available(Settings(base_url="http://x/v1"), demo=True)


def test_fusion_endpoint_same_server_or_its_own():
    tr = Endpoint("http://x/v1", "tkey", "hymt")
    same = fusion_endpoint(Settings(fusion_model="chimera"), tr)
    assert same == Endpoint("http://x/v1", "tkey", "chimera")
    assert fusion_endpoint(Settings(), tr) == tr  # the demo model plays both roles
    own = fusion_endpoint(Settings(fusion_base_url="http://y/v1/", fusion_api_key="fk",
                                   fusion_model="c"), tr)
    assert own == Endpoint("http://y/v1", "fk", "c")


def test_fusion_policy_is_shared_for_the_same_server_and_retry_free_for_another():
    tr = Endpoint("http://x/v1", "k", "hymt")
    translation = Policy()
    shared_settings = Settings(base_url="http://x/v1", api_key="k", fusion_model="chimera")
    assert FusionRoute(shared_settings, translation).policy(tr) is translation
    route = FusionRoute(Settings(fusion_base_url="http://y/v1"), translation)
    other = route.policy(tr)
    assert isinstance(other, Policy) and other._retries is False and other is not translation
    assert route.policy(tr) is other  # one window for the fusion server


# --- the happy paths -----------------------------------------------------------------------


async def test_fuses_candidates_from_one_request_with_the_official_prompt():
    client = FakeClient()
    result = await _best(client)
    assert result.text == FUSED and result.fused == 1 and not result.downgraded
    first = client.calls[0]
    assert first["n"] == 4 and first["temperature"] == 0.9 and first["top_p"] == 0.9
    assert first["prompt"] == build_prompt(SOURCE, "fr", "en")
    unique = [c for c, _ in dedupe(CANDIDATES)]
    assert client.fusion_calls[0]["prompt"] == build_chimera_prompt(SOURCE, "fr", "en", unique)
    assert len(client.calls) == 2 and result.fusion_calls == 1
    assert best_note(result).startswith("Best quality: fused 3 candidate translations")


async def test_fusion_on_its_own_client():
    client, fusion = FakeClient(), FakeClient(base_url="http://y/v1")
    result = await _best(client, fusion)
    assert result.text == FUSED
    assert not client.fusion_calls and len(fusion.fusion_calls) == 1


async def test_agreeing_candidates_need_no_fusion():
    client = FakeClient(candidates=["Same answer."] * 4)
    result = await _best(client)
    assert result.text == "Same answer." and not client.fusion_calls
    assert not result.downgraded and result.outcomes[0].kind == "agreed"
    assert best_note(result) == "Best quality: every candidate translation agreed."


async def test_long_text_is_segmented_and_joined_like_a_standard_translation():
    client = FakeClient()
    text = "Première ligne.\n\nDeuxième ligne.\nTroisième ligne.\n"
    result = await _best(client, text=text)
    assert result.text == f"{FUSED}\n\n{FUSED}\n{FUSED}\n"
    assert result.fused == 3 and result.translation.segments == 3


async def test_segments_are_sized_for_the_fusion_prompt():
    client = FakeClient()
    text = " ".join(["Une phrase de longueur moyenne pour remplir le texte."] * 40)
    result = await _best(client, text=text, max_model_len=4096)
    budget = chimera_segment_budget(4096, 4)
    sources = [c["prompt"].split("\n\n", 1)[1] for c in client.calls if c["n"] > 1]
    assert len(sources) == result.translation.segments >= len(text) // budget
    assert all(len(s) <= budget for s in sources)


# --- downgrades ----------------------------------------------------------------------------


async def test_under_load_no_candidates_are_asked_for():
    client = FakeClient()
    translator, _, policy = _setup(client)

    async def refused():
        raise ModelBusyError("busy")

    for _ in range(2):  # two in flight get a 503: the window is halved
        with pytest.raises(ModelBusyError):
            await policy.run(refused, user="other")
    assert policy.window < 8
    assert load_reason(policy, 8) == chimera.BUSY
    result = await translate_best(translator, SOURCE, "en", "fr", fusion=client,
                                  fusion_policy=policy)
    assert result.text == "Plain translation." and [c["n"] for c in client.calls] == [1]
    assert result.downgraded and result.outcomes[0].kind == "plain"
    assert best_note(result) == (
        "Best quality unavailable (the server is busy): showing the standard translation."
    )


async def test_candidates_refused_by_the_server_gives_the_standard_translation():
    client = FakeClient(candidate_error=ModelBusyError("503"))
    result = await _best(client)
    assert result.text == "Plain translation." and result.reasons == (chimera.BUSY,)
    client = FakeClient(candidate_error=ModelError("n is not supported"))
    result = await _best(client)
    assert result.text == "Plain translation." and result.reasons == (chimera.NO_CANDIDATES,)


def _status_error(status: int) -> ModelError:
    err = ModelError(f"HTTP {status}")
    err.__cause__ = status_error(status)
    return err


@pytest.mark.parametrize(("error", "reason"), [
    (ModelBusyError("503"), "the fusion model is busy"),
    (ModelUnavailableError("refused"), "the fusion model is not reachable"),
    (_status_error(401), "the fusion server refused the API key (HYMT_FUSION_API_KEY)"),
    (_status_error(404), "the fusion server does not serve that model (HYMT_FUSION_MODEL)"),
    (_status_error(500), "the fusion model failed (HTTP 500)"),
])
async def test_fusion_failure_falls_back_to_the_medoid_and_says_why(error, reason):
    client = FakeClient()
    fusion = FakeClient(base_url="http://y/v1", fusion_error=error)
    result = await _best(client, fusion, fusion_policy=Policy(retries=False))
    assert result.text == CANDIDATES[0]  # the consensus candidate
    assert result.outcomes[0].kind == "medoid" and result.reasons == (reason,)
    assert result.fusion_calls == 1
    assert best_note(result) == (
        f"Best quality unavailable ({reason}): showing the best single candidate."
    )


async def test_a_lone_fence_around_the_fused_answer_is_removed():
    result = await _best(FakeClient(fused="```" + FUSED))
    assert result.text == FUSED and result.fused == 1


@pytest.mark.parametrize("answer", [
    "", "1. ```Hello```\n2. ```Hi```", "Hi.",
    "Here is my analysis of the four translations. " * 10,
])
async def test_a_fusion_answer_that_is_not_a_translation_is_not_shown(answer):
    result = await _best(FakeClient(fused=answer))
    assert result.text == CANDIDATES[0] and result.reasons == (chimera.MALFORMED,)


async def test_busy_fusion_server_is_not_even_asked():
    client, fusion = FakeClient(), FakeClient(base_url="http://y/v1")
    fusion_policy = Policy(window_max=8, retries=False)

    async def refused():
        raise ModelBusyError("busy")

    with pytest.raises(ModelBusyError):
        await fusion_policy.run(refused, user="u")
    result = await _best(client, fusion, fusion_policy=fusion_policy)
    assert not fusion.calls and result.text == CANDIDATES[0]
    assert result.reasons == ("the fusion model is busy",)


async def test_partial_downgrade_is_counted_per_part():
    client = FakeClient()
    fusion = FakeClient(base_url="http://y/v1")
    answers = iter([FUSED, ""])
    original = fusion.complete

    async def flaky(prompt, **kw):
        await original(prompt, **kw)  # the call happens (and is counted); its answer is replaced
        return [next(answers)]

    fusion.complete = flaky  # type: ignore[method-assign]
    result = await _best(client, fusion, text="Ligne un.\nLigne deux.",
                         fusion_policy=Policy(retries=False), segment_concurrency=1)
    assert result.fused == 1 and len(result.downgrades) == 1
    assert best_note(result) == (
        "Best quality unavailable for 1 of 2 parts (the fusion model's answer was not a "
        "translation): showing the best single candidate."
    )


async def test_the_demo_model_playing_chimera_is_not_called_hunyuan_mt_chimera():
    """On the embedded demo with no fusion model configured, the demo model fuses: the note
    and the switch say so instead of naming Hunyuan-MT-Chimera as the fuser."""
    result = await _best(FakeClient())
    assert best_note(result, stand_in=True) == (
        "Best quality: fused 3 candidate translations (the demo model standing in for "
        "Hunyuan-MT-Chimera).")
    assert chimera.fusion_stand_in(Settings(), demo=True)
    assert not chimera.fusion_stand_in(Settings(fusion_model="chimera"), demo=True)
    assert not chimera.fusion_stand_in(Settings(fusion_base_url="http://y/v1"), demo=True)
    assert not chimera.fusion_stand_in(Settings(), demo=False)
    assert "standing in" in wording.best_label(True) and "standing" not in wording.best_label(False)
