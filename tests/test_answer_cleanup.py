import pytest

from hymt_chat.answers import strip_wrapping


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
    ],
)
def test_strip_wrapping(answer, source, expected):
    assert strip_wrapping(answer, source) == expected
