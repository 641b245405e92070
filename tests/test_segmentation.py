"""split_segments is lossless and size-bounded; segment sizing fits the model's context."""

from __future__ import annotations

import random

import pytest

from hymt_chat.text.segments import estimate_tokens, max_tokens_for, segment_budget, split_segments


def _check(text: str, max_chars: int) -> list[str]:
    segments = split_segments(text, max_chars)
    assert "".join(segments) == text
    assert all(0 < len(seg) <= max_chars for seg in segments)
    return segments


# --- the lossless property over many generated texts ---------------------------------------

_ALPHABET = (
    "abcdefghij ABC Ñé ü ß "  # Latin
    "你好世界中文文本 "  # Han
    "สวัสดีครับ "  # Thai
    "မြန်မာ "  # Burmese
    "བོད་ཡིག "  # Tibetan
    "नमस्ते "  # Devanagari
    "مرحبا שלום "  # RTL
    "😀👨\u200d👩\u200d👧 "  # emoji
    "...!!??,;: "  # Latin punctuation
    "。！？…… "  # CJK punctuation
    "။།༎।॥؟۔ "  # other sentence ends
    "\n\n\n\t   "  # whitespace, weighted towards line breaks
)


def _random_text(rng: random.Random) -> str:
    length = rng.choice([0, 1, 2, 5, 20, 100, 500, 3000])
    return "".join(rng.choice(_ALPHABET) for _ in range(length))


def test_lossless_and_bounded_on_random_mixed_texts() -> None:
    rng = random.Random(20240601)
    for _ in range(600):
        text = _random_text(rng)
        _check(text, rng.choice([1, 2, 3, 7, 16, 50, 200, 1500]))


def test_lossless_on_random_word_salad() -> None:
    rng = random.Random(7)
    words = ["Hello", "world.", "Dr.", "3.14", "你好。", "ok?", "\n", "\n\n", " ", "  ", "x" * 60]
    for _ in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 200)))
        _check(text, rng.choice([5, 13, 40, 120]))


# --- edge cases ------------------------------------------------------------------------------

def test_empty_text_gives_no_segments() -> None:
    assert split_segments("", 100) == []


@pytest.mark.parametrize("max_chars", [0, -1])
def test_max_chars_below_one_raises(max_chars: int) -> None:
    with pytest.raises(ValueError):
        split_segments("text", max_chars)


def test_short_single_line_is_one_segment() -> None:
    assert split_segments("Hello, world.", 100) == ["Hello, world."]


def test_every_line_is_its_own_segment_with_its_newlines_at_the_end() -> None:
    text = "first line\nsecond line\n\nnew paragraph\n"
    assert split_segments(text, 1000) == ["first line\n", "second line\n\n", "new paragraph\n"]


def test_whitespace_only_lines_stick_to_the_previous_segment() -> None:
    text = "\n\n  Hi\n  \n\nthere"
    assert split_segments(text, 100) == ["\n\n  Hi\n  \n\n", "there"]


def test_paragraphs_kept_in_long_multi_paragraph_text() -> None:
    rng = random.Random(3)
    sentence = "This is a sentence of a paragraph about nothing in particular. "
    paragraphs = [sentence * rng.randint(2, 12) for _ in range(40)]
    text = "\n\n".join(p.rstrip() for p in paragraphs)
    assert len(text) >= 10_000
    segments = _check(text, 400)
    assert len(segments) >= len(paragraphs)
    assert sum(seg.endswith("\n\n") for seg in segments) == len(paragraphs) - 1
    assert all("\n\n" not in seg[:-2] for seg in segments)  # never two paragraphs in one


def test_long_line_split_at_sentence_ends_and_packed() -> None:
    text = "One two three. Four five six? Seven eight nine! Ten eleven twelve."
    segments = _check(text, 32)
    assert segments == [
        "One two three. Four five six? ", "Seven eight nine! ", "Ten eleven twelve."
    ]


def test_trailing_whitespace_stays_with_its_sentence() -> None:
    segments = _check("First sentence.   Second sentence.", 20)
    assert segments == ["First sentence.   ", "Second sentence."]


def test_decimal_point_is_not_a_sentence_end() -> None:
    segments = _check("Pi is 3.14159 and e is 2.71828 roughly", 20)
    assert any("3.14159" in seg for seg in segments)
    assert any("2.71828" in seg for seg in segments)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你好。我很好！你呢？好的。", ["你好。", "我很好！", "你呢？", "好的。"]),
        ("「走吧。」他说。我们走了。", ["「走吧。」", "他说。", "我们走了。"]),
        ("等一下……好了吗？", ["等一下……", "好了吗？"]),
        ("สวัสดีครับ วันนี้อากาศดี ไปเที่ยวกัน", ["สวัสดีครับ ", "วันนี้อากาศดี ", "ไปเที่ยวกัน"]),
        ("မင်္ဂလာပါ။ နေကောင်းလား။", ["မင်္ဂလာပါ။ ", "နေကောင်းလား။"]),
        (
            "བཀྲ་ཤིས་བདེ་ལེགས། ཁྱེད་རང་སྐུ་གཟུགས་བདེ་པོ་ཡིན་པས།",
            ["བཀྲ་ཤིས་བདེ་ལེགས། ", "ཁྱེད་རང་སྐུ་གཟུགས་བདེ་པོ་ཡིན་པས།"],
        ),
        ("नमस्ते। आप कैसे हैं॥ ठीक", ["नमस्ते। ", "आप कैसे हैं॥ ", "ठीक"]),
        ("کیا حال ہے؟ میں ٹھیک ہوں۔ شکریہ", ["کیا حال ہے؟ ", "میں ٹھیک ہوں۔ ", "شکریہ"]),
        ("Wait… what? OK", ["Wait… ", "what? ", "OK"]),
    ],
)
def test_script_specific_sentence_ends(text: str, expected: list[str]) -> None:
    max_chars = max(len(s) for s in expected)  # small enough that no two sentences fit together
    assert _check(text, max_chars) == expected


def test_overlong_sentence_cut_at_whitespace() -> None:
    words = [f"word{i:03d}" for i in range(100)]
    text = " ".join(words) + "."
    segments = _check(text, 50)
    assert len(segments) > 1
    assert all(seg.endswith(" ") for seg in segments[:-1])  # every cut falls after a space
    assert segments[-1].endswith("099.")


def test_run_without_any_boundary_is_hard_cut() -> None:
    text = "x" * 20_000
    segments = _check(text, 1500)
    assert len(segments) == 14
    assert all(len(seg) == 1500 for seg in segments[:-1])


def test_cjk_run_without_punctuation_is_hard_cut() -> None:
    text = "中" * 5000
    segments = _check(text, 1000)
    assert [len(s) for s in segments] == [1000] * 5


FAMILY = "👨\u200d👩\u200d👧"


def test_hard_cut_does_not_tear_accents_or_emoji() -> None:
    text = ("e\u0301" * 10) + FAMILY * 10
    for max_chars in range(len(FAMILY), 12):  # a cluster longer than max_chars must be torn
        for seg in _check(text, max_chars):
            assert seg[0] not in "\u0301\u200d"
            assert not seg.endswith("\u200d")


def test_mixed_scripts_in_one_long_line() -> None:
    text = (
        "Hello there. 你好。 Привет, как дела? สวัสดี ครับ مرحبا؟ नमस्ते। "
        "བཀྲ་ཤིས། မင်္ဂလာပါ။ "
    ) * 30
    segments = _check(text, 60)
    assert len(segments) > 10
    assert all(seg.strip() for seg in segments)


def test_lines_are_never_merged_even_when_short() -> None:
    text = "a\nb\nc"
    assert split_segments(text, 1000) == ["a\n", "b\n", "c"]


# --- sizing ----------------------------------------------------------------------------------

def test_segment_budget_default_context() -> None:
    assert 1300 <= segment_budget(4096) <= 1600


def test_segment_budget_monotonic_and_capped() -> None:
    previous = 0
    for max_model_len in range(257, 65_537, 97):
        budget = segment_budget(max_model_len)
        assert budget >= previous
        assert budget <= 2000
        previous = budget
    assert segment_budget(1_000_000) == 2000


def test_segment_budget_fits_prompt_segment_and_translation() -> None:
    for max_model_len in (257, 512, 1024, 2048, 4096):
        n = segment_budget(max_model_len)
        assert 40 + n + 1.5 * n <= max_model_len  # CJK worst case: one token per character


def test_segment_budget_rejects_context_smaller_than_prompt() -> None:
    with pytest.raises(ValueError):
        segment_budget(32)


def test_estimate_tokens_by_script() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a" * 300) == 100
    assert estimate_tokens("中" * 300) == 300
    assert estimate_tokens("ไทย" * 100) == 300
    assert estimate_tokens("я" * 300) == 150
    assert estimate_tokens("Hello 世界") == 2 + 2


def test_max_tokens_for_short_text_has_a_floor() -> None:
    assert max_tokens_for("Hi", 4096) == 64


def test_max_tokens_for_grows_with_text() -> None:
    assert max_tokens_for("中" * 500, 4096) == 2 * 500 + 32


def test_max_tokens_for_never_exceeds_the_context() -> None:
    for n in (100, 1000, 1466, 3000, 5000):
        text = "中" * n
        tokens = max_tokens_for(text, 4096)
        assert tokens >= 16
        assert tokens <= max(16, 4096 - n - 64)


def test_max_tokens_for_a_full_budget_segment_leaves_room_for_a_long_translation() -> None:
    n = segment_budget(4096)
    assert max_tokens_for("中" * n, 4096) >= 1.5 * n
