"""A tab never waits for itself: documents, files and long pastes run as background
jobs of the session, each with its own Cancel, while the tab's short messages go on.

The sessions are driven directly (no Chainlit) against a stand-in model whose answers to the
document's parts are held back on demand (``Gate``): a real vLLM cannot be told to hold one
request and answer another, and that is exactly the moment under test. The real-server and
real-browser versions are in ``tests/test_e2e_own_tab.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hymt_chat.modes import wording
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.session import Session, Upload
from hymt_chat.modes.translator_session import TranslatorSession
from tests.support.engine_double import running_double
from tests.support.gate import Gate
from tests.support.sessions import Line, RecordingScreen, services
from tests.support.stub_model import StubModel

DOCUMENT = "\n\n".join(f"Paragraphe {i} de la lettre envoyée au client hier." for i in range(8))
ONE_LINER = "Bonjour, comment allez-vous ?"


@pytest.fixture
def gate():
    gate = Gate()
    yield gate
    gate.open()  # never leave a server thread blocked


@pytest.fixture
def stub(gate):
    with StubModel(answer=gate) as model:
        yield model


def _services(stub: StubModel, tmp_path: Any) -> Any:
    # Short segments, so that the text above is a document of eight parts (bulk work).
    return services(stub, tmp_path, segment_chars=80)


def _translator(stub: StubModel, tmp_path: Any) -> tuple[TranslatorSession, RecordingScreen]:
    screen = RecordingScreen()
    return TranslatorSession(_services(stub, tmp_path), screen, session_id="s1",
                             user_key="addr:1"), screen


async def _until(condition: Any, what: str) -> None:
    for _ in range(3000):  # a safety net, not a speed bound: the condition comes in ms
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def _file(tmp_path: Any, name: str) -> Upload:
    path = tmp_path / name
    path.write_text(DOCUMENT, encoding="utf-8")
    return Upload(str(path), name)


def _job_lines(screen: RecordingScreen) -> list[Line]:
    return [line for line in screen.lines if line.cancel is not None]


async def _press(session: Session, line: Line) -> None:
    assert line.cancel is not None
    removed: list[bool] = []

    async def remove() -> None:
        removed.append(True)

    await session.button(line.cancel.name, line.cancel.payload, line.cancel.label, remove)
    assert removed == [True]  # the button goes away at once


async def test_a_one_liner_is_answered_while_the_tabs_own_document_translates(
        stub, gate, tmp_path):
    session, screen = _translator(stub, tmp_path)
    await session.message("", None, uploads=[_file(tmp_path, "lettre.txt")])
    assert session.jobs  # the message returned at once: the document is a job of its own
    await _until(lambda: gate.waiting >= 1, "the document's parts reach the model")
    [line] = _job_lines(screen)
    assert "lettre.txt" in line.names[0]  # its line is shown from the start, with a Cancel

    await session.message(ONE_LINER, None)  # answered now, while every part is held
    assert ONE_LINER in screen.last().markdown
    assert session.jobs and not screen.last().files  # the document is still going

    gate.open()
    await session.settled()
    [out] = screen.last().files
    assert out.name == "lettre.en.txt"
    assert out.content.decode() == DOCUMENT  # whole and in order (the stand-in echoes)
    assert line.became is not None and line.became.files == (out,)  # the line became it


async def test_cancel_stops_one_job_and_leaves_the_others(stub, gate, tmp_path):
    session, screen = _translator(stub, tmp_path)
    await session.message("", None, uploads=[_file(tmp_path, "a.txt"), _file(tmp_path, "b.txt")])
    await _until(lambda: len(_job_lines(screen)) == 2 and gate.waiting >= 2, "both jobs start")
    first, second = _job_lines(screen)
    assert first.cancel.payload != second.cancel.payload  # each job its own Cancel

    await _press(session, first)
    await _until(lambda: first.closed is not None, "the cancelled line closes")
    assert wording.CANCELLED in first.closed[0] and first.closed[1]
    assert len(session.jobs) == 1

    gate.open()
    await session.settled()
    assert [f.name for s in screen.shown for f in s.reply.files] == [
        second.names[0].split()[-1].replace(".txt", ".en.txt")]
    assert second.became is not None and second.closed is None

    await _press(session, first)  # a second press, once it is over: said, nothing breaks
    assert screen.last().markdown == wording.escape_markdown(wording.JOB_ALREADY_OVER)


async def test_stop_leaves_background_jobs_and_closing_the_tab_cancels_them(
        stub, gate, tmp_path):
    session, screen = _translator(stub, tmp_path)
    await session.message("", None, uploads=[_file(tmp_path, "a.txt")])
    await _until(lambda: gate.waiting >= 1, "the document starts")
    session.stop()  # the composer's Stop: for the message it was shown for, not this job
    await asyncio.sleep(0)
    assert session.jobs

    gate.open()
    await session.settled()
    assert [f.name for f in screen.last().files] == ["a.en.txt"]

    gate.close()
    await session.message("", None, uploads=[_file(tmp_path, "b.txt")])
    await _until(lambda: len(_job_lines(screen)) == 2, "the second document starts")
    tasks = list(session.jobs.values())
    session.end()  # the tab closed
    await asyncio.gather(*tasks, return_exceptions=True)
    assert all(task.done() for task in tasks) and not session.jobs
    assert _job_lines(screen)[-1].closed[0].endswith(wording.CANCELLED)
    assert [f.name for s in screen.shown for f in s.reply.files] == ["a.en.txt"]


async def test_stop_cancels_the_running_message_whichever_task_chainlit_names(
        stub, gate, tmp_path):
    """Chainlit's Stop cancels its ``current_task``: whichever handler set it last. A message
    sent while the tab's ``connection_successful`` still emits loses it to ``on_chat_start``'s
    task, and Stop then left the message's call running on vLLM (seen in CI and here: the
    real-server run is ``test_e2e_app``'s Stop test). The session cancels its own message."""
    session, screen = _translator(stub, tmp_path)
    message = asyncio.create_task(session.message("Paragraphe court, à traduire.", None))
    await _until(lambda: gate.waiting >= 1, "the message reaches the model")
    assert session.inline  # running in the message's own task, which the session knows
    session.stop()
    await asyncio.gather(message, return_exceptions=True)
    assert message.cancelled() and not session.inline
    gate.open()
    assert not any("Paragraphe court" in s.reply.markdown for s in screen.shown)


async def test_the_agent_keeps_talking_while_a_long_paste_translates(stub, gate, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(_services(stub, tmp_path), screen, session_id="a1",
                           user_key="user:bob")
    await session.start()
    await session.message("/customer French", None)
    await session.message(DOCUMENT, None)  # the customer's long message: in the background
    await _until(lambda: gate.waiting >= 1, "the long paste reaches the model")
    assert session.jobs and _job_lines(screen)

    await session.message(ONE_LINER, None)
    assert ONE_LINER in screen.last().markdown  # the agent's short line did not wait
    gate.open()
    await session.settled()
    assert "Paragraphe 7" in screen.last().markdown
    assert len(session.conv.transcript) == 2


async def test_retry_the_rest_after_its_job_was_cancelled_runs_again(stub, gate, tmp_path):
    gate.fail_once = "Paragraphe 3"
    gate.held = "Paragraphe 3"
    gate.open()  # first run: everything passes but the part that fails
    session, screen = _translator(stub, tmp_path)
    await session.message(DOCUMENT, None)
    await session.settled()
    [retry] = screen.last().buttons
    assert retry.name == "retry_rest"

    gate.close()  # the rest is held, then cancelled
    waiting = gate.waiting

    async def remove() -> None:
        pass

    await session.button("retry_rest", retry.payload, retry.label, remove)
    await _until(lambda: gate.waiting > waiting, "the rest reaches the model")
    await _press(session, _job_lines(screen)[-1])
    await session.settled()
    assert wording.CANCELLED in _job_lines(screen)[-1].closed[0]

    gate.open()  # the same (stale) Retry the rest again: the kept rest runs, whole
    await session.button("retry_rest", retry.payload, retry.label, remove)
    await session.settled()
    answer = screen.last().markdown
    assert "Paragraphe 3" in answer and "not translated" not in answer


async def test_two_documents_of_one_tab_take_turns(tmp_path):
    """Several documents at once share the documents' slots among themselves: their
    parts reach the model interleaved, not one whole document after the other."""

    def doc(prompt: str) -> str:
        return "A" if "document A" in prompt else "B"

    with running_double(max_num_seqs=16, max_queued=64, api_key="k",
                        hold=lambda req: "document" in req.prompt) as double:
        session, screen = _translator(double, tmp_path)  # type: ignore[arg-type]
        policy = session.services.translator.policy
        uploads = []
        for name in ("a", "b"):
            path = tmp_path / f"{name}.txt"
            path.write_text(DOCUMENT.replace("de la lettre", f"du document {name.upper()}"),
                            encoding="utf-8")
            uploads.append(Upload(str(path), path.name))
        await session.message("", None, uploads=uploads)
        # Each slot is handed on alone, once both documents have parts waiting: which part
        # comes next is the policy's choice, never a race with the answers.
        await double.until(lambda d: d.count("running") == policy.window_max - policy.reserve
                           and policy.queue_length >= 2, "the documents' slots full")
        while len(double.requests) < 16:
            before = len(double.requests)
            double.release(1)
            await double.until(lambda d, n=before: len(d.requests) > n, "the freed slot used")
        started = [doc(r.prompt) for r in sorted(double.requests, key=lambda r: r.started or 0)]
        first_half = started[:8]
        assert first_half.count("A") >= 3 and first_half.count("B") >= 3, started
        double.set_hold(False)
        await session.settled()
        order = [doc(r.prompt) for r in double.requests if "document" in r.prompt]
    assert sorted(order) == ["A"] * 8 + ["B"] * 8, order  # each part once
    assert sorted(f.name for s in screen.shown for f in s.reply.files) == ["a.en.txt", "b.en.txt"]
