import pytest

from hymt_chat.engine.prompts import (
    build_chimera_prompt,
    build_context_prompt,
    build_prompt,
    build_terminology_prompt,
    chat_messages,
)
from hymt_chat.lang.languages import LANGUAGES, get_language

CHINESE = {"zh", "zh-Hant", "yue"}


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.code)
def test_every_language_as_target_from_english(lang):
    prompt = build_prompt("Hello", "en", lang.code)
    if lang.code in CHINESE:
        assert prompt == f"把下面的文本翻译成{lang.chinese}，不要额外解释。\n\nHello"
    else:
        assert prompt == (
            f"Translate the following segment into {lang.english}, "
            "without additional explanation.\n\nHello"
        )


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.code)
def test_every_language_as_source_into_chinese_uses_the_chinese_template(lang):
    prompt = build_prompt("x", lang.code, "zh")
    assert prompt == "把下面的文本翻译成中文，不要额外解释。\n\nx"


@pytest.mark.parametrize("source", ["zh", "zh-Hant", "yue"])
def test_chinese_source_uses_chinese_names_for_the_target(source):
    assert build_prompt("你好", source, "fr") == "把下面的文本翻译成法语，不要额外解释。\n\n你好"


def test_pair_without_chinese_uses_english_template_and_english_name():
    assert build_prompt("Bonjour", "fr", "de").startswith(
        "Translate the following segment into German, without additional explanation.\n\n"
    )


def test_prompt_accepts_aliases_and_keeps_text_verbatim():
    text = "  line one\nline two 👨‍👩‍👧 <b>x</b>  "
    assert build_prompt(text, "english", "zh-TW").endswith("\n\n" + text)
    assert "繁体中文" in build_prompt(text, "english", "zh-TW")


def test_chimera_prompt_matches_the_official_layout():
    prompt = build_chimera_prompt("你好世界", "zh", "en", ["Hello world", "Hi world", "Hello, world"])
    assert prompt == (
        "Analyze the following multiple English translations of the Chinese segment surrounded in "
        "triple backticks and generate a single refined English translation. Only output the "
        "refined translation, do not explain.\n\n"
        "The Chinese segment:\n```你好世界```\n\n"
        "The multiple English translations:\n"
        "1. ```Hello world```\n2. ```Hi world```\n3. ```Hello, world```"
    )


def test_chimera_needs_candidates():
    with pytest.raises(ValueError):
        build_chimera_prompt("x", "en", "fr", [])


def test_optional_templates():
    assert build_terminology_prompt("订单号是多少", "en", [("订单号", "order number")]) == (
        "参考下面的翻译：\n订单号 翻译成 order number\n\n"
        "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n订单号是多少"
    )
    assert build_context_prompt("It is red.", "zh", "I bought a car.") == (
        "I bought a car.\n参考上面的信息，把下面的文本翻译成中文，注意不需要翻译上文，也不要额外解释：\nIt is red."
    )


def test_no_system_message_ever():
    messages = chat_messages(build_prompt("Hi", "en", "fr"))
    assert messages == [{"role": "user", "content": build_prompt("Hi", "en", "fr")}]
    assert all(m["role"] != "system" for m in messages)


def test_unknown_code_in_prompt_raises():
    with pytest.raises(ValueError):
        build_prompt("x", "en", "xx")
    assert get_language("ug").chinese == "维吾尔语"
