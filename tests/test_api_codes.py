"""Each API dialect's language codes map to ours both ways; unknown ones are refused."""

import pytest

from hymt_chat.api.codes import (
    deepl_source_code,
    deepl_sources,
    deepl_targets,
    from_deepl,
    from_libre,
    libre_code,
    libre_codes,
)
from hymt_chat.errors import UnknownLanguageError
from hymt_chat.lang.languages import LANGUAGES


def test_libretranslate_names_chinese_by_script_and_round_trips_every_language() -> None:
    assert libre_code("zh") == "zh-Hans" and libre_code("zh-Hant") == "zh-Hant"
    assert len(set(libre_codes())) == 38
    assert all(from_libre(libre_code(lang.code), "target") == lang.code for lang in LANGUAGES)


@pytest.mark.parametrize(("sent", "ours"), [("zh", "zh"), ("zt", "zh-Hant"), ("ZH-TW", "zh-Hant"),
                                            ("pb", "pt"), ("pt-BR", "pt"), ("iw", "he"),
                                            ("fil", "tl"), ("yue", "yue")])
def test_libretranslate_aliases(sent: str, ours: str) -> None:
    assert from_libre(sent, "source") == ours


def test_deepl_targets_split_by_region_and_script() -> None:
    targets = dict(deepl_targets())
    assert targets["EN-US"] == "English (US)" and targets["PT-BR"] == "Portuguese (BR)"
    assert {"ZH-HANS", "ZH-HANT", "YUE", "BO"} <= set(targets) and "EN" not in targets
    assert [from_deepl(c, "target_lang") for c in ("en-us", "EN-GB", "EN", "PT-PT", "ZH",
                                                   "zh-hans", "ZH-HANT")] == [
        "en", "en", "en", "pt", "zh", "zh", "zh-Hant"]
    assert len(deepl_sources()) == 38 and deepl_source_code("zh-Hant") == "ZH-HANT"


@pytest.mark.parametrize("bad", ["xx", "", "klingon", None, 42, "en-" * 30])
def test_unknown_codes_are_refused_with_the_list(bad: object) -> None:
    with pytest.raises(UnknownLanguageError, match="zh-Hans"):
        from_libre(bad, "target")
    with pytest.raises(UnknownLanguageError, match="target_lang.*ZH-HANT"):
        from_deepl(bad, "target_lang")
