"""A document never dies on one part: what was translated is kept, in place, and only the
missing parts are sent again (Translator.translate_rest, translate_document_rest, the CLI).

A scripted client stands in for the model: these tests need a part to fail on demand, which a
real vLLM does not do; the real-server version (a SIGKILL mid-document) is in
test_e2e_priority.py.
"""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.cli import main as cli
from hymt_chat.engine.client import ModelClients
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import MISSING_MARK, Translator
from hymt_chat.errors import (
    IncompleteTranslationError,
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
)
from hymt_chat.modes import documents
from hymt_chat.settings import Settings

LINES = [f"Ligne numéro {i} de la lettre au client." for i in range(1, 7)]
TEXT = "\n".join(LINES)


class Flaky:
    """Answers "EN(<source>)"; sources listed in ``fail`` raise the given error (each time)."""

    def __init__(self, fail: dict[str, Exception]) -> None:
        self.fail = fail
        self.sent: list[str] = []

    async def complete(self, prompt: str, *, max_tokens: int, source: str = "", **_request):
        self.sent.append(source)
        err = self.fail.get(source)
        if err is not None:
            raise err
        return [f"EN({source})"]


def _translator(client: Flaky) -> Translator:
    # checks off: "EN(<French>)" is a marker, not a translation, and the answer checks would
    # rightly ask for it again (they are tested in tests/test_checks_*.py).
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=False, bulk_segments=100,
                        checks=False)
    return Translator(settings, client, Policy(retries=False))  # type: ignore[arg-type]


async def test_a_failed_part_keeps_the_others_in_place_and_marked() -> None:
    client = Flaky({LINES[1]: ModelBusyError("busy"), LINES[4]: ModelTimeoutError("slow")})
    with pytest.raises(IncompleteTranslationError) as info:
        await _translator(client).translate(TEXT, "en", "fr")
    err = info.value
    assert (err.done, err.total, err.missing) == (4, 6, [2, 5])
    assert str(err).startswith("Translated 4 of 6 parts; parts 2, 5 could not be translated")
    lines = err.partial.text.split("\n")
    assert lines[0] == f"EN({LINES[0]})" and lines[3] == f"EN({LINES[3]})"
    assert lines[1] == MISSING_MARK + LINES[1] and lines[4] == MISSING_MARK + LINES[4]
    assert len(lines) == len(LINES)


async def test_retry_the_rest_sends_only_the_missing_parts() -> None:
    client = Flaky({LINES[2]: ModelBusyError("busy")})
    translator = _translator(client)
    with pytest.raises(IncompleteTranslationError) as info:
        await translator.translate(TEXT, "en", "fr")
    client.fail.clear()
    client.sent.clear()
    progress: list[tuple[int, int]] = []
    result = await translator.translate_rest(
        info.value.partial, on_progress=lambda d, t: progress.append((d, t)))
    assert client.sent == [LINES[2]]  # the five done parts were not sent again
    assert result.text == "\n".join(f"EN({line})" for line in LINES)
    assert progress == [(5, 6), (6, 6)]  # the parts kept are counted from the first second


async def test_a_one_part_message_that_fails_raises_its_own_error() -> None:
    client = Flaky({LINES[0]: ModelBusyError("The translation server is still busy")})
    with pytest.raises(ModelBusyError, match="still busy"):
        await _translator(client).translate(LINES[0], "en", "fr")


async def test_a_bug_is_not_turned_into_a_partial_translation() -> None:
    client = Flaky({LINES[3]: RuntimeError("bug")})  # not a model failure: stop everything
    with pytest.raises(RuntimeError, match="bug"):
        await _translator(client).translate(TEXT, "en", "fr")


async def test_a_document_keeps_its_translated_pieces_and_finishes_the_rest() -> None:
    srt = "".join(f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n{line}\n\n"
                  for i, line in enumerate(LINES[:4], 1))
    doc = documents.load_document("talk.srt", srt.encode())
    sent: list[str] = []
    broken = {LINES[1]}

    async def translate(text: str, *, on_progress=None) -> str:
        sent.append(text)
        if text in broken:
            raise ModelBusyError("busy")
        return f"EN({text})"

    with pytest.raises(IncompleteTranslationError) as info:
        await documents.translate_document(doc, translate)
    partial = info.value.partial
    assert info.value.missing == [2]
    assert "00:00:02,000 --> 00:00:02,900" in partial.text  # the frame is all there
    assert MISSING_MARK + LINES[1] in partial.text and f"EN({LINES[0]})" in partial.text
    broken.clear()
    sent.clear()
    out = await documents.translate_document_rest(partial, translate)
    assert sent == [LINES[1]]
    assert out == srt.replace(LINES[1], f"EN({LINES[1]})").replace(
        LINES[0], f"EN({LINES[0]})").replace(LINES[2], f"EN({LINES[2]})").replace(
        LINES[3], f"EN({LINES[3]})")


async def test_a_piece_that_failed_half_way_resumes_where_it_stopped() -> None:
    client = Flaky({LINES[4]: ModelBusyError("busy")})
    translator = _translator(client)
    doc = documents.load_document("letter.txt", TEXT.encode())  # one piece of six lines

    async def translate(text: str, *, on_progress=None) -> str:
        return (await translator.translate(text, "en", "fr")).text

    async def resume(partial, *, on_progress=None) -> str:
        return (await translator.translate_rest(partial)).text

    with pytest.raises(IncompleteTranslationError) as info:
        await documents.translate_document(doc, translate, resume=resume)
    assert f"EN({LINES[0]})" in info.value.partial.text  # the piece's own done lines kept
    client.fail.clear()
    client.sent.clear()
    out = await documents.translate_document_rest(info.value.partial, translate, resume=resume)
    assert client.sent == [LINES[4]]
    assert out == "\n".join(f"EN({line})" for line in LINES)


def test_the_cli_prints_what_it_has_and_exits_non_zero(monkeypatch, capsys) -> None:
    client = Flaky({LINES[1]: ModelError("The model server failed (HTTP 500).")})
    monkeypatch.setattr(ModelClients, "current", lambda self: client)
    code = cli.main(["translate", "--to", "en", "--from", "fr", "--wait", "1",
                     "--base-url", "http://127.0.0.1:9/v1", TEXT])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_INCOMPLETE
    assert out.split("\n")[0] == f"EN({LINES[0]})"
    assert MISSING_MARK + LINES[1] in out
    assert "part 2 could not be translated" in err and "HTTP 500" in err


def test_the_runner_cancels_everything_on_a_bug() -> None:
    from hymt_chat.engine.runner import run_bounded

    cancelled: list[int] = []

    async def slow(i: int) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    async def bug() -> None:
        raise KeyError("bug")

    async def main() -> None:
        await run_bounded([lambda: slow(0), bug, lambda: slow(2)], lambda: 3)

    with pytest.raises(KeyError):
        asyncio.run(main())
    assert sorted(cancelled) == [0, 2]
