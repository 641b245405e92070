"""DeepL's translate options -> the engine's (hymt_chat.api.deepl_options), rule by rule.

DeepL's side, from deepl-python's suite (tests/test_translate_text.py, DeepLcom/deepl-python
2cdf70f): ``test_formality`` — ``more``/``less`` raise for a target without formality
(``match=r".*formality.*"``), ``prefer_more``/``prefer_less`` never do; ``test_model_type`` —
every ``ModelType`` is accepted and ``model_type_used`` is set; ``test_split_sentences_basic``
— "0", "1", "nonewlines" accepted, "invalid" raises.
"""

from __future__ import annotations

import pytest

from hymt_chat.api.deepl_options import parse_options, supports_formality
from hymt_chat.engine.families import get_family
from hymt_chat.engine.priority import API, INTERACTIVE
from hymt_chat.errors import InputError

MT2, MT1 = get_family("hy-mt2"), get_family("hunyuan-mt")


def options(**kwargs: object):  # type: ignore[no-untyped-def]
    defaults: dict[str, object] = {"target": "de", "family": MT2, "quality_available": True}
    return parse_options(**{**defaults, **kwargs})  # type: ignore[arg-type]


def test_no_option_is_the_default_prompt_in_the_api_class() -> None:
    plain = options()
    assert plain.plain and plain.klass == API and plain.model_type_used is None


def test_formality_needs_a_style_instruction_and_a_target_deepl_offers_it_for() -> None:
    assert supports_formality(MT2, "de") and not supports_formality(MT2, "en")
    assert not supports_formality(MT1, "de")  # Hunyuan-MT has no style instruction
    formal = options(formality="more").prompt
    assert formal is not None
    assert "must strictly conform to [formal]" in formal("Hi", "en", "de")
    assert "严格符合【正式】" in formal("你好", "zh", "de")  # the Chinese prompt for a Chinese pair
    for family, target in ((MT2, "en"), (MT1, "de")):
        # deepl-python's test_formality (tests/test_translate_text.py:210-215 at v1.30.0)
        with pytest.raises(InputError, match=r".*Target language.*formality.*"):
            options(family=family, target=target, formality="less")
        assert options(family=family, target=target, formality="prefer_less").plain
    with pytest.raises(InputError, match="formality"):
        options(formality="very")


def test_custom_instructions_need_the_personalization_instruction() -> None:
    built = options(custom_instructions=["Be concise"], formality="less").prompt
    assert built is not None
    prompt = built("Hi there", "en", "de")
    assert "1. Be concise\n2. Use an informal, casual register\n3. Translate" in prompt
    with pytest.raises(InputError, match="Hy-MT2"):
        options(family=MT1, custom_instructions=["Be concise"])
    with pytest.raises(InputError, match="At most 10"):
        options(custom_instructions=[f"rule {i}" for i in range(11)])
    with pytest.raises(InputError, match="list of strings"):
        options(custom_instructions=[{"rule": 1}])
    assert options(custom_instructions=["", "  "]).plain  # empty ones are none


def test_model_type_picks_the_class_or_best_quality() -> None:
    fast = options(model_type="latency_optimized")
    assert fast.klass == INTERACTIVE and fast.model_type_used == "latency_optimized"
    best = options(model_type="quality_optimized")
    assert best.quality and best.model_type_used == "quality_optimized" and not best.plain
    assert best.klass == API
    with pytest.raises(InputError, match="model_type"):
        options(model_type="turbo")


@pytest.mark.parametrize("kind", ["quality_optimized", "prefer_quality_optimized"])
def test_quality_is_served_where_no_fusion_model_is_configured(kind: str) -> None:
    """DeepL: "All features and language pairs are compatible with all model_type values"
    (developers.deepl.com, Translate text, "About the model_type parameter"; DeepLcom/api-docs
    api-reference/translate.mdx:390). Without Best quality the request is served by the
    model's own answer in the API class (not the interactive one latency takes) and named
    ``quality_optimized``, as deepl-python's test_model_type only asks it to be named."""
    served = options(model_type=kind, quality_available=False)
    assert not served.quality and served.plain and served.klass == API
    assert served.model_type_used == "quality_optimized"


@pytest.mark.parametrize("kind", ["quality_optimized", "prefer_quality_optimized"])
def test_an_instruction_with_quality_is_served_by_the_instruction(kind: str) -> None:
    """Formality and custom instructions are features DeepL serves with every model type
    (same page; docs/best-practices/custom-instructions.mdx:88: "compatible with all
    model_type values"): the instruction's prompt wins over fusion, which would drop it."""
    for extra in ({"formality": "more"}, {"custom_instructions": ["Be concise"]}):
        styled = options(model_type=kind, **extra)
        assert not styled.quality and styled.prompt is not None, extra
        assert styled.model_type_used == "quality_optimized" and styled.klass == API


@pytest.mark.parametrize("value", ["0", "1", "nonewlines", "NoNewlines"])
def test_split_sentences_takes_deepls_values(value: str) -> None:
    assert options(split_sentences=value).plain


def test_split_sentences_refuses_others() -> None:
    with pytest.raises(InputError, match="split_sentences"):
        options(split_sentences="invalid")
