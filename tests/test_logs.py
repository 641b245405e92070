"""Structured logs: JSON lines with the request id (contextvars), rotation, policy events."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys

import pytest

from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.errors import ModelBusyError
from hymt_chat.service import logs
from hymt_chat.settings import Settings


@pytest.fixture
def logger(tmp_path):
    """A private logger with our handlers (file + stream), removed afterwards."""
    name = f"hymt-test-{tmp_path.name}"
    stream = io.StringIO()
    handlers = logs.configure_logging(log_file=tmp_path / "app.log", stream=stream, logger=name,
                                      max_bytes=2000, backup_count=2)
    log = logging.getLogger(name)
    log.propagate = False
    yield log, stream, tmp_path / "app.log"
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()


def _restore(name: str, handlers: list[logging.Handler]) -> None:
    target = logging.getLogger(name)
    for handler in handlers:
        target.removeHandler(handler)
        handler.close()
    target.setLevel(logging.NOTSET)


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_one_json_object_per_line_with_time_level_logger_message(logger):
    log, stream, path = logger
    log.info("translated %d segments", 3, extra={"target": "en"})
    (line,) = _lines(path.read_text())
    assert line["level"] == "INFO" and line["logger"] == log.name
    assert line["message"] == "translated 3 segments" and line["target"] == "en"
    assert line["time"].endswith("+00:00") and line["request_id"] is None
    assert _lines(stream.getvalue()) == [line]
    assert list(line)[:5] == ["time", "level", "logger", "message", "request_id"]


def test_request_id_follows_the_context_into_tasks(logger):
    log, _, path = logger

    async def segment(n: int) -> None:
        await asyncio.sleep(0)
        log.info("segment %d", n)

    async def message() -> None:
        with logs.request_context() as rid:
            await asyncio.gather(segment(1), segment(2))
            return rid

    async def two_users() -> list[str]:
        return list(await asyncio.gather(message(), message()))

    rids = asyncio.run(two_users())
    lines = _lines(path.read_text())
    assert len(set(rids)) == 2 and all(len(r) == 12 for r in rids)
    assert sorted(line["request_id"] for line in lines) == sorted(rids * 2)
    with logs.request_context("given-id"):
        assert logs.current_request_id() == "given-id"
    assert logs.current_request_id() is None

    async def handler() -> str | None:  # a Chainlit event handler runs in its own task
        logs.bind_request_id("handler-id")
        return logs.current_request_id()

    async def run_handler() -> str | None:
        return await asyncio.create_task(handler())

    assert asyncio.run(run_handler()) == "handler-id"
    assert logs.current_request_id() is None  # nothing leaked into the caller's context


def test_non_ascii_and_exceptions_stay_one_line(logger):
    log, _, path = logger
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("翻译失败 — تعذرت الترجمة")
    (line,) = _lines(path.read_text())
    assert line["message"] == "翻译失败 — تعذرت الترجمة"
    assert "ValueError: boom" in line["exc_info"]
    assert len(path.read_text().strip().splitlines()) == 1


def test_the_file_rotates(logger):
    log, _, path = logger
    for i in range(100):
        log.info("line %d %s", i, "x" * 50)
    rotated = sorted(p.name for p in path.parent.glob("app.log*"))
    assert rotated == ["app.log", "app.log.1", "app.log.2"]  # backup_count=2, oldest dropped
    assert all(p.stat().st_size <= 2000 for p in path.parent.glob("app.log*"))
    for p in path.parent.glob("app.log*"):
        _lines(p.read_text())  # every rotated file is still JSON lines


def test_configuring_again_replaces_the_handlers(tmp_path):
    name = "hymt-test-reconfigure"
    target = logging.getLogger(name)
    first = logs.configure_logging(log_file=tmp_path / "a.log", stream=None, logger=name)
    second = logs.configure_logging(log_file=tmp_path / "b.log", stream=None, logger=name)
    try:
        assert [h for h in target.handlers if h in first] == []
        assert all(h in target.handlers for h in second)
    finally:
        for handler in second:
            target.removeHandler(handler)
            handler.close()


def test_default_file_is_in_the_cache_dir(tmp_path):
    settings = Settings(cache_dir=tmp_path)
    assert logs.default_log_file(settings) == tmp_path / "logs" / "app.log"


async def test_policy_events_are_logged_with_the_request_id(tmp_path):
    stream = io.StringIO()
    handlers = logs.configure_logging(stream=stream, logger="hymt_chat.engine.policy")
    policy = Policy(deadline=0.05, initial_delay=0.002, max_delay=0.01)
    policy.add_hook(logs.log_policy_event)

    async def busy() -> str:
        raise ModelBusyError("The engine is currently busy")

    try:
        with logs.request_context("req-42"), pytest.raises(ModelBusyError):
            await policy.run(busy, user="u")
    finally:
        _restore("hymt_chat.engine.policy", handlers)
    lines = _lines(stream.getvalue())
    assert {line["request_id"] for line in lines} == {"req-42"}
    retry = next(line for line in lines if line["event"] == "retrying")
    assert retry["level"] == "INFO" and retry["error"] == "busy (503)" and "delay" in retry
    assert lines[-1]["event"] == "gave_up" and lines[-1]["level"] == "WARNING"


def test_debug_events_only_when_debug_is_on(tmp_path):
    stream = io.StringIO()
    handlers = logs.configure_logging(stream=stream, logger="hymt_chat.engine.policy", level="INFO")
    try:
        logs.log_policy_event(PolicyEvent("queued", ahead=3))
        assert stream.getvalue() == ""
    finally:
        _restore("hymt_chat.engine.policy", handlers)


def test_one_line_per_record_on_the_console_and_no_line_per_poll(tmp_path, capsys):
    target = logging.getLogger("hymt-test-console")
    plain = logging.StreamHandler(sys.stderr)  # like Chainlit's own plain console handler
    target.addHandler(plain)
    logs.configure_logging(log_file=tmp_path / "app.log", logger=target, stream=sys.stderr)
    try:
        target.info("one record")
        logging.getLogger("httpx").info("HTTP Request: GET http://127.0.0.1:8021/health 200")
        console = capsys.readouterr().err.strip().splitlines()
    finally:
        for handler in list(target.handlers):
            target.removeHandler(handler)
    assert plain not in target.handlers
    assert len([line for line in console if "one record" in line]) == 1
    assert json.loads(console[-1])["message"] == "one record"
    assert logging.getLogger("httpx").getEffectiveLevel() > logging.INFO
