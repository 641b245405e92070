"""Every family's official templates, character for character, in both languages and every kind.

The expected texts are typed from the official READMEs (Tencent-Hunyuan/Hunyuan-MT, HY-MT and
Hy-MT2, read 2026-12-01), not from the module: Hy-MT2's table with its Markdown bold, italics
and code backticks left out, ``<br>`` as a newline.
"""

from __future__ import annotations

import typing

import pytest

import hymt_chat
from hymt_chat.engine.families import (
    FAMILIES,
    UnsupportedPromptError,
    detect_family,
    family_in_force,
    forget_served_model,
    get_family,
    note_served_model,
)
from hymt_chat.engine.prompts import build_prompt
from hymt_chat.settings import ModelFamily, Settings

TERMS = [("订单号", "order number"), ("包裹", "parcel")]


@pytest.fixture(autouse=True)
def _no_served_model():
    forget_served_model()
    yield
    forget_served_model()


# --- Hy-MT2 -----------------------------------------------------------------------------------

MT2_ZH = {
    "default": "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好",
    "terminology": "参考下面的翻译：\n订单号 翻译成 order number\n包裹 翻译成 parcel\n"
                   "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好",
    "style": "请将以下文本翻译为英语。\n注意翻译的风格要严格符合【正式】\n\n你好",
    "personalization": "【待翻译文本】\n你好\n\n【翻译任务】\n1、保持简短\n2、用敬语\n"
                       "3、将【待翻译文本】翻译为英语。",
    "delimiters": "请将以下文本准确翻译为英语。\n你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，"
                  "并注意分隔符的位置。\n\n你好",
    "structured": "# 任务目标\n将下方你好中的JSON格式数据翻译为英语。\n\n# 严格约束\n"
                  "1. 结构锁定：绝对保持原有的JSON数据结构、缩进和层级完全不变。\n"
                  "2. 选择性翻译：仅翻译面向用户展示的可见文本内容。\n"
                  "3. 禁止修改：严禁翻译或更改任何代码标签、键名 (Key)、变量占位符（如{{var}}、${var}、%s、"
                  "%d等）或代码属性。\n\n# 数据输入\n你好",
    "context": "【背景信息】\n客户：我的包裹坏了\n\n请结合背景信息将以下文本翻译为英语。\n\n【待翻译文本】\n你好",
}
MT2_EN = {
    "default": "Translate the following text into French. Note that you should only output the "
               "translated result without any additional explanation:\n\nHello",
    "terminology": "Reference the following translations:\n订单号 translates to order number\n"
                   "包裹 translates to parcel\n\nTranslate the following text into French. Note "
                   "that you must ONLY output the translated result without any additional "
                   "explanation:\n\nHello",
    "style": "Please translate the following text into French. Note that the translation style "
             "must strictly conform to [formal]:\n\nHello",
    "personalization": "[Source Text]\nHello\n\n[Translation Tasks]\n1. Keep it short\n"
                       "2. Use vous\n3. Translate the [Source Text] into French.",
    "delimiters": "Please accurately translate the following text into French.\nYou must retain "
                  "the exact same number of delimiters in the translation. Strictly do not omit, "
                  "escape, or translate these symbols, and pay close attention to their "
                  "placement.\n\nHello",
    "structured": "### Task\nTranslate the user-facing text within the following JSON data into "
                  "French.\n\n### Strict Rules\n1. Structure Preservation: You MUST preserve the "
                  "original JSON data structure, nesting, hierarchy, and indentation exactly as "
                  "they are.\n2. Selective Translation: Translate ONLY the visible, user-facing "
                  "text content/values.\n3. Strict Non-Translation: NEVER translate or alter code "
                  "tags, keys, properties, object names, or variable placeholders. Leave them "
                  "exactly in their original English/code form.\n\n### Source Data\nHello",
    "context": "[Background Information]\nCustomer: my parcel is broken\n\nPlease translate the "
               "following text into French, taking the provided background information into "
               "consideration.\n\n[Source Text]\nHello",
}
MT2_FIELDS_ZH = {"terminology": {"terms": TERMS}, "style": {"style": "正式"},
                 "personalization": {"preferences": ["保持简短", "用敬语"]},
                 "structured": {"format_type": "JSON"}, "context": {"context": "客户：我的包裹坏了"}}
MT2_FIELDS_EN = {"terminology": {"terms": TERMS}, "style": {"style": "formal"},
                 "personalization": {"preferences": ["Keep it short", "Use vous"]},
                 "structured": {"format_type": "JSON"},
                 "context": {"context": "Customer: my parcel is broken"}}


@pytest.mark.parametrize("kind", sorted(MT2_ZH))
def test_hy_mt2_chinese_prompts_are_the_official_text(kind):
    prompt = get_family("hy-mt2").prompt(kind, text="你好", source="zh", target="en",
                                         **MT2_FIELDS_ZH.get(kind, {}))
    assert prompt == MT2_ZH[kind]


@pytest.mark.parametrize("kind", sorted(MT2_EN))
def test_hy_mt2_english_prompts_are_the_official_text(kind):
    prompt = get_family("hy-mt2").prompt(kind, text="Hello", source="en", target="fr",
                                         **MT2_FIELDS_EN.get(kind, {}))
    assert prompt == MT2_EN[kind]


def test_hy_mt2_publishes_every_kind_but_formatted():
    family = get_family("hy-mt2")
    assert set(family.kinds) == set(MT2_ZH) == set(MT2_EN)
    with pytest.raises(UnsupportedPromptError, match="no official formatted"):
        family.prompt("formatted", text="x", source="en", target="zh")


# --- HY-MT1.5 ---------------------------------------------------------------------------------


def test_hy_mt15_default_prompts_are_the_official_text():
    family = get_family("hy-mt1.5")
    assert family.prompt("default", text="你好", source="zh", target="en") == (
        "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好")
    assert family.prompt("default", text="It’s on the house.", source="en", target="de") == (
        "Translate the following segment into German, without additional explanation.\n\n"
        "It’s on the house.")


def test_hy_mt15_terminology_context_and_formatted_are_chinese_whatever_the_pair():
    family = get_family("hy-mt1.5")
    assert family.prompt("terminology", text="Hola", source="es", target="en",
                         terms=[("pedido", "order")]) == (
        "参考下面的翻译：\npedido 翻译成 order\n\n将以下文本翻译为英语，注意只需要输出翻译后的结果，"
        "不要额外解释：\nHola")
    assert family.prompt("context", text="It is red.", source="en", target="fr",
                         context="I bought a car.") == (
        "I bought a car.\n参考上面的信息，把下面的文本翻译成法语，注意不需要翻译上文，也不要额外解释：\n"
        "It is red.\n")
    assert family.prompt("formatted", text="<s1>Hi</s1>", source="en", target="zh") == (
        "将以下<source></source>之间的文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释，原文中的"
        "<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。输出格式为："
        "<target>str</target>\n\n<source><s1>Hi</s1></source>")


def test_hy_mt15_lacks_style_delimiters_structured_and_formatted_is_into_chinese_only():
    family = get_family("hy-mt1.5")
    assert family.kinds == ("default", "terminology", "context", "formatted")
    for kind in ("style", "delimiters", "structured", "personalization"):
        with pytest.raises(UnsupportedPromptError):
            family.prompt(kind, text="x", source="en", target="fr", style="formal",
                          format_type="JSON", preferences=["a"])
    with pytest.raises(UnsupportedPromptError, match="into Chinese only"):
        family.prompt("formatted", text="x", source="en", target="fr")


# --- Hunyuan-MT -------------------------------------------------------------------------------


def test_hunyuan_mt_has_only_its_default_templates():
    family = get_family("hunyuan-mt")
    assert family.kinds == ("default",) and family.chimera
    assert family.prompt("default", text="你好", source="zh", target="en") == (
        "把下面的文本翻译成英语，不要额外解释。\n\n你好")
    assert family.prompt("default", text="Hola", source="es", target="en") == (
        "Translate the following segment into English, without additional explanation.\n\nHola")
    with pytest.raises(UnsupportedPromptError, match="Hunyuan-MT has no official terminology"):
        family.prompt("terminology", text="x", source="en", target="fr", terms=TERMS)
    assert isinstance(UnsupportedPromptError("x"), ValueError)


# --- filling ----------------------------------------------------------------------------------


def test_the_text_is_never_filled_in_and_missing_fields_are_refused():
    family = get_family("hy-mt2")
    text = "Use {target_lang}, {source_text} and {{var}} literally"
    assert family.prompt("default", text=text, source="en", target="de").endswith("\n\n" + text)
    with pytest.raises(ValueError, match="needs terms="):
        family.prompt("terminology", text="x", source="en", target="de")
    with pytest.raises(ValueError, match="needs format_type="):
        family.prompt("structured", text="x", source="en", target="de", format_type="")


def test_the_chinese_template_is_used_when_either_side_is_chinese_with_chinese_names():
    family = get_family("hy-mt2")
    assert family.prompt("default", text="x", source="en", target="zh-Hant").startswith(
        "将以下文本翻译为繁体中文，")
    assert family.prompt("default", text="x", source="yue", target="fr").startswith(
        "将以下文本翻译为法语，")
    assert family.prompt("default", text="x", source="fr", target="de").startswith(
        "Translate the following text into German.")


# --- sampling, sizes, detection ---------------------------------------------------------------


def test_sampling_per_family_and_size_is_the_published_one():
    classic = {"temperature": 0.7, "top_p": 0.6, "top_k": 20, "repetition_penalty": 1.05}
    assert get_family("hunyuan-mt").sampling.as_dict() == classic
    assert get_family("hy-mt1.5").at_size("1.8b").sampling.as_dict() == classic
    assert get_family("hy-mt2").sampling.as_dict() == {**classic, "max_tokens": 4096}
    assert get_family("hy-mt2").at_size("1.8b").sampling.as_dict() == {**classic,
                                                                       "max_tokens": 4096}
    assert get_family("hy-mt2").at_size("30b-a3b").sampling.as_dict() == {
        "temperature": 0.7, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0,
        "max_tokens": 4096}
    with pytest.raises(ValueError, match="no 30b-a3b model"):
        get_family("hy-mt1.5").at_size("30b-a3b")


@pytest.mark.parametrize(("model", "family", "size"), [
    ("tencent/Hunyuan-MT-7B", "hunyuan-mt", "7b"),
    ("tencent/Hunyuan-MT-Chimera-7B-fp8", "hunyuan-mt", "7b"),
    ("tencent/HY-MT1.5-1.8B-GPTQ-Int4", "hy-mt1.5", "1.8b"),
    ("/models/HY-MT1.5-7B-FP8", "hy-mt1.5", "7b"),
    ("tencent/Hy-MT2-7B", "hy-mt2", "7b"),
    ("tencent/Hy-MT2-1.8B-GGUF", "hy-mt2", "1.8b"),
    ("/srv/hf/Hy-MT2-30B-A3B-FP8/", "hy-mt2", "30b-a3b"),
])
def test_a_model_name_or_path_says_its_family_and_size(model, family, size):
    found = detect_family(model)
    assert found is not None and (found.name, found.size) == (family, size)
    assert get_family(model) == found


def test_unknown_names_are_refused_and_unrelated_models_are_no_family():
    assert detect_family("Qwen2.5-Coder-0.5B-Instruct") is None
    assert detect_family("hymt") is None  # the sidecar's served name says nothing
    with pytest.raises(ValueError, match="known: hunyuan-mt, hy-mt1.5, hy-mt2"):
        get_family("gpt-4")


def test_family_in_force_setting_then_served_model_then_model_path_then_hunyuan_mt():
    assert family_in_force(Settings(model_family="auto")).name == "hunyuan-mt"
    assert family_in_force(Settings(model_path="tencent/HY-MT1.5-1.8B")).name == "hy-mt1.5"
    note_served_model("/models/Hy-MT2-30B-A3B")
    in_force = family_in_force(Settings(model_path="tencent/HY-MT1.5-1.8B"))
    assert (in_force.name, in_force.size) == ("hy-mt2", "30b-a3b")
    # A named family wins; the served model's size still picks its sampling.
    assert family_in_force(Settings(model_family="hunyuan-mt")).name == "hunyuan-mt"
    assert family_in_force(Settings(model_family="hy-mt2")).size == "30b-a3b"


def test_the_setting_takes_exactly_the_families_and_build_prompt_follows_it(monkeypatch):
    assert set(typing.get_args(ModelFamily)) == {"auto", *FAMILIES}
    with pytest.raises(ValueError, match="model_family"):
        Settings(model_family="hy-mt3")
    from hymt_chat import settings as settings_module

    monkeypatch.setenv("HYMT_MODEL_FAMILY", "hy-mt2")
    settings_module.get_settings.cache_clear()
    try:
        assert build_prompt("Hello", "en", "fr") == MT2_EN["default"]
    finally:
        settings_module.get_settings.cache_clear()


def test_get_family_is_on_the_front_door():
    family = hymt_chat.get_family("hy-mt2")
    assert family.name == "hy-mt2" and family.sampling.top_k == 20
    assert hymt_chat.UnsupportedPromptError is UnsupportedPromptError
