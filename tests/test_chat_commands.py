"""Chat commands, session languages and the wording of the chat (no Chainlit, no model)."""

import pytest

from hymt_chat.engine.policy import PolicyEvent
from hymt_chat.engine.translator import Translation
from hymt_chat.errors import CommandError, HymtError, UnknownLanguageError
from hymt_chat.lang.languages import CODES
from hymt_chat.lang.names import AUTO, language_choices, language_label
from hymt_chat.modes.chat import (
    ChatState,
    DetectCommand,
    ResetCommand,
    SwapCommand,
    ToCommand,
    parse_command,
)
from hymt_chat.modes.wording import (
    describe_event,
    escape_markdown,
    format_duration,
    format_meta,
    literal_block,
    same_language_message,
)

# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [("/to ja", "ja"), ("/to Japanese", "ja"), ("/to 日语", "ja"), ("/TO  zh-tw ", "zh-Hant"),
     ("/to traditional chinese", "zh-Hant"), ("/to 法语", "fr"), ("/to pt-BR", "pt"),
     ("/to Cantonese", "yue")],
)
def test_to_accepts_codes_names_and_aliases(text, code):
    command = parse_command(text)
    assert isinstance(command, ToCommand)
    assert command.language.code == code


def test_command_chosen_in_the_composer_menu_takes_the_text_as_argument():
    assert parse_command("German", command="to") == ToCommand(parse_command("/to de").language)
    assert parse_command("", command="swap") == SwapCommand()
    assert parse_command("bonjour", command="detect") == DetectCommand("bonjour")
    assert parse_command("", command="reset") == ResetCommand()


def test_other_commands_and_plain_text():
    assert parse_command("/swap") == SwapCommand()
    assert parse_command("/reset") == ResetCommand()
    assert parse_command("/detect Guten Tag") == DetectCommand("Guten Tag")
    assert parse_command("/detect") == DetectCommand("")
    # Text that merely starts with a slash is translated, not refused.
    assert parse_command("/usr/bin is a folder") is None
    assert parse_command("/tomorrow we meet") is None
    assert parse_command("hello /to ja") is None
    assert parse_command("") is None


def test_unknown_language_lists_the_valid_ones():
    with pytest.raises(UnknownLanguageError) as info:
        parse_command("/to klingon")
    message = str(info.value)
    assert "“klingon”" in message
    assert "Traditional Chinese (zh-Hant)" in message and "Cantonese (yue)" in message
    assert all(f"({code})" in message for code in CODES)
    assert isinstance(info.value, HymtError)  # the app shows it like any other error


def test_to_without_a_language_explains_and_lists():
    with pytest.raises(CommandError, match="Which language") as info:
        parse_command("/to")
    assert "Japanese (ja)" in str(info.value)


# --- session state ---------------------------------------------------------------------------


def test_new_session_uses_the_default_target_and_auto_detect():
    state = ChatState.new("zh-TW")
    assert (state.source, state.target) == (AUTO, "zh-Hant")
    assert ChatState.new("nonsense").target == "en"
    assert state.pair == "Auto-detect → Traditional Chinese"


def test_picker_values_are_applied_and_changes_reported():
    state = ChatState.new("en")
    assert state.set_languages("auto", "ja") is True
    assert state.picker_values() == {"source": AUTO, "target": "ja"}
    assert state.set_languages("auto", "ja") is False
    assert state.set_languages("fr", None) is True
    assert state.pair == "French → Japanese"
    with pytest.raises(UnknownLanguageError):
        state.set_languages(target="xx")
    assert state.target == "ja"  # a refused value changes nothing


def test_swap_with_explicit_source():
    state = ChatState.new("en")
    state.set_languages("zh", "en")
    state.swap()
    assert (state.source, state.target) == ("en", "zh")


def test_swap_with_auto_detect_uses_the_last_other_language():
    state = ChatState.new("en")
    with pytest.raises(CommandError, match="Nothing to swap"):
        state.swap()
    state.remember("zh")  # a Chinese message was translated into English
    state.swap()
    assert (state.source, state.target) == (AUTO, "zh")
    state.swap()  # and back
    assert state.target == "en"


def test_changing_the_target_keeps_the_old_one_to_swap_back_to():
    state = ChatState.new("en")
    state.remember("en")  # English typed while the target is English: nothing to swap with
    state.set_languages(target="fr")
    state.set_languages(target="en")
    state.swap()
    assert state.target == "fr"


def test_reset_forgets_everything():
    state = ChatState.new("en")
    state.set_languages("de", "ja")
    state.remember("de")
    state.reset("en")
    assert state == ChatState.new("en")


# --- wording ---------------------------------------------------------------------------------


def test_picker_choices_have_readable_names():
    targets = language_choices(include_auto=False)
    sources = language_choices(include_auto=True)
    assert len(targets) == 38 and len(sources) == 39
    assert targets["Chinese (Traditional)"] == "zh-Hant"  # CLDR's English name, no gloss
    assert next(iter(sources.items())) == ("Auto-detect", AUTO)
    assert set(targets.values()) == set(CODES)
    assert language_label("yue") == "Cantonese (yue)"


def test_meta_line():
    result = Translation("Hello", "zh", "en", True, False, 1, 0.84)
    assert format_meta(result) == "Chinese → English · 0.8 s"
    long = Translation("…", "ja", "zh-Hant", True, False, 12, 75.2)
    assert format_meta(long, demo=True) == (
        "Japanese → Traditional Chinese · 1 min 15 s · 12 parts · demo model"
    )
    unsure = Translation("…", None, "en", True, False, 1, 12.4)
    assert format_meta(unsure) == "Unknown language → English · 12 s"
    assert format_duration(120) == "2 min"


def test_same_language_message_offers_a_way_out():
    assert "already in English" in same_language_message("en", can_swap=True)
    assert "Swap" in same_language_message("en", can_swap=True)
    assert "/to" in same_language_message("en", can_swap=False)


def test_policy_events_become_short_statuses():
    assert describe_event(PolicyEvent("queued", ahead=2)) == "busy — waiting (2 ahead)"
    retrying = describe_event(PolicyEvent("retrying", delay=1.5, error="busy (503)"))
    assert retrying == "model busy — retrying in 1.5 s"  # the reason goes to the log
    assert describe_event(PolicyEvent("started")) is None
    assert describe_event(PolicyEvent("queued", ahead=0)) is None


# --- showing model output literally ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["<img src=x onerror=alert(1)>", "**not bold** and # not a heading", "a ``` fence\n```\ninside",
     "`code` and ```` four", "plain"],
)
def test_literal_block_cannot_be_closed_from_inside(text):
    block = literal_block(text)
    fence = block.split("\n", 1)[0]
    assert set(fence) == {"`"} and len(fence) >= 3
    assert block == f"{fence}\n{text}\n{fence}"
    # No line of the text is a closing fence for it.
    assert all(not line.strip().startswith(fence) for line in text.splitlines())


def test_escape_markdown_neutralises_markup():
    escaped = escape_markdown("[x](javascript:alert(1)) <b>*hi*</b>")
    assert "\\[" in escaped and "\\<" in escaped and "\\*" in escaped
    assert escaped.replace("\\", "") == "[x](javascript:alert(1)) <b>*hi*</b>"
