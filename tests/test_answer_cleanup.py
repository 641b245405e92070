import pytest

from hymt_chat.text.answers import strip_wrapping


@pytest.mark.parametrize(
    ("answer", "source", "expected"),
    [
        ("```\nHello world\n```", "你好世界", "Hello world"),
        ("```text\nHello\n```", "你好", "Hello"),
        ('"Hello world"', "你好世界", "Hello world"),
        ("“Hello world”", "你好世界", "Hello world"),
        ("「こんにちは」", "Hello", "こんにちは"),
        ("  Hello  \n", "你好", "Hello"),
        ('"Hi" she said, "bye"', "x", '"Hi" she said, "bye"'),  # not one pair: untouched
        ('"Hello"', '"你好"', '"Hello"'),  # the source was quoted: keep the quotes
        ("```code```", "```code```", "```code```"),
        ("```I forgot my password.```", "我忘记密码了", "I forgot my password."),
        ("```Hello, I would like```", "x", "Hello, I would like"),
    ],
)
def test_strip_wrapping(answer, source, expected):
    assert strip_wrapping(answer, source) == expected


from hymt_chat.text.answers import keep_line_structure


def test_one_line_source_gets_one_line_translation():
    assert keep_line_structure("Bonjour.\n\nComment ça va ?", "Hello. How are you?") == (
        "Bonjour. Comment ça va ?")
    assert keep_line_structure("a  \n b", "x") == "a b"


def test_multi_line_source_and_single_line_answers_are_untouched():
    assert keep_line_structure("un\ndeux", "one\ntwo") == "un\ndeux"
    assert keep_line_structure("Bonjour.", "Hello.") == "Bonjour."
