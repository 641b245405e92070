import pytest

from hymt_chat.errors import HymtError, UnknownLanguageError
from hymt_chat.lang.languages import CODES, LANGUAGES, find_language, get_language

REFERENCE_ORDER = (
    "zh en fr pt es ja tr ru ar ko th it de vi ms id tl hi zh-Hant pl cs nl km my fa gu ur te "
    "mr he bn ta uk bo kk mn ug yue"
).split()


def test_table_has_the_38_languages_in_reference_order():
    assert [lang.code for lang in LANGUAGES] == REFERENCE_ORDER
    assert len(set(CODES)) == 38


def test_each_entry_has_english_and_chinese_names():
    names = {lang.code: (lang.english, lang.chinese) for lang in LANGUAGES}
    assert names["zh-Hant"] == ("Traditional Chinese", "繁体中文")
    assert names["yue"] == ("Cantonese", "粤语")
    assert names["tl"] == ("Filipino", "菲律宾语")
    assert all(lang.english and lang.chinese for lang in LANGUAGES)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("en", "en"), ("EN", "en"), ("english", "en"), ("English", "en"), ("英语", "en"),
        ("zh-CN", "zh"), ("zh-cn", "zh"), ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"),
        ("zh-hant", "zh-Hant"), ("traditional chinese", "zh-Hant"), ("繁体中文", "zh-Hant"),
        ("yue", "yue"), ("Cantonese", "yue"), ("粤语", "yue"), ("pt-BR", "pt"), ("en_US", "en"),
        ("farsi", "fa"), ("tagalog", "tl"), ("  German  ", "de"), ("deutsch", "de"),
        ("iw", "he"), ("日本語", "ja"), ("tibetan", "bo"), ("维吾尔语", "ug"),
    ],
)
def test_lookup_accepts_codes_names_and_aliases(query, code):
    assert get_language(query).code == code


@pytest.mark.parametrize("query", ["xx", "", "   ", "klingon", "zh-XX-YY", "english2"])
def test_unknown_language_is_a_value_error_listing_codes(query):
    with pytest.raises(UnknownLanguageError) as info:
        get_language(query)
    assert isinstance(info.value, ValueError) and isinstance(info.value, HymtError)
    message = str(info.value)
    assert all(code in message for code in CODES)
    assert find_language(query) is None


def test_non_string_is_refused_cleanly():
    with pytest.raises(UnknownLanguageError):
        get_language(None)  # type: ignore[arg-type]


def test_chinese_side_languages():
    assert {lang.code for lang in LANGUAGES if lang.is_chinese} == {"zh", "zh-Hant", "yue"}
