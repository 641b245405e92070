"""Structured logs: one JSON object per line, with the request id, in a rotating file.

Personal data (e-mail addresses, phones, cards, IBANs, order numbers) is written as
placeholders unless ``HYMT_LOG_PII=keep``; links and bare numbers stay (hosts, sizes).

``configure_logging(settings)`` installs the handlers once per process (calling it again
replaces them). ``with request_context():`` gives everything logged inside it — including the
tasks it starts and the policy's events — the same ``request_id``; a front end opens one per
user message. ``log_policy_event`` is a policy hook (``policy.add_hook(log_policy_event)``) that
logs retries and give-ups with that id.

A line looks like::

    {"time": "2026-11-30T09:16:49.123+00:00", "level": "WARNING", "logger": "hymt_chat.engine.policy",
     "message": "model call gave up", "request_id": "3f2a9c81d0e4", "event": "gave_up",
     "attempt": 4, "error": "busy (503)"}
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pythonjsonlogger.json import JsonFormatter  # python-json-logger >= 3.1, as pyproject pins

from hymt_chat.text.personal import LOG_KINDS, redact

if TYPE_CHECKING:
    from hymt_chat.engine.policy import PolicyEvent
    from hymt_chat.settings import Settings

__all__ = [
    "JsonLineFormatter",
    "RequestIdFilter",
    "bind_request_id",
    "configure_logging",
    "current_request_id",
    "default_log_file",
    "log_policy_event",
    "new_request_id",
    "request_context",
]

REQUEST_ID: ContextVar[str | None] = ContextVar("hymt_request_id", default=None)
MAX_BYTES = 10 * 1024 * 1024  # per file
BACKUP_COUNT = 5  # app.log.1 … app.log.5: at most ~60 MB of logs
_MARK = "_hymt_handler"
_policy_log = logging.getLogger("hymt_chat.engine.policy")


def new_request_id() -> str:
    return uuid.uuid4().hex[:12]


def current_request_id() -> str | None:
    return REQUEST_ID.get()


def bind_request_id(request_id: str | None = None) -> str:
    """Give the current context a request id until it ends (for a handler that runs in its own
    task, as Chainlit's event handlers do); returns it."""
    rid = request_id or new_request_id()
    REQUEST_ID.set(rid)
    return rid


@contextmanager
def request_context(request_id: str | None = None) -> Iterator[str]:
    """Everything logged inside (and in tasks started inside) carries this request id."""
    rid = request_id or new_request_id()
    token = REQUEST_ID.set(rid)
    try:
        yield rid
    finally:
        REQUEST_ID.reset(token)


class RequestIdFilter(logging.Filter):
    """Stamps ``record.request_id`` (None outside a request). On handlers, so that records of
    every logger that reaches them get it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return True


class JsonLineFormatter(JsonFormatter):
    """time, level, logger, message, request_id, then any ``extra=`` fields; with *redact*,
    personal data in the message, the fields and a traceback as placeholders (``[email-1]``:
    :mod:`hymt_chat.text.personal`)."""

    def __init__(self, *, redact: bool = True) -> None:
        super().__init__(
            "%(levelname)s %(name)s %(message)s %(request_id)s",
            rename_fields={"levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
        self.redact = redact

    def add_fields(
        self, log_record: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        log_record["time"] = datetime.fromtimestamp(record.created, UTC).isoformat(
            timespec="milliseconds"
        )
        super().add_fields(log_record, record, message_dict)
        if self.redact:
            for name, value in log_record.items():
                if isinstance(value, str) and name not in _PLAIN_FIELDS:
                    log_record[name] = redact(value, LOG_KINDS).text


_PLAIN_FIELDS = frozenset({"time", "level", "logger", "request_id"})


def default_log_file(settings: Settings) -> Path:
    """``HYMT_LOG_FILE``, else ``app.log`` in the cache: one file per process (a rotating file
    shared by two processes loses lines at each rotation), so app replicas set their own."""
    return settings.log_file or settings.cache_dir / "logs" / "app.log"


def configure_logging(
    settings: Settings | None = None,
    *,
    log_file: Path | str | None = None,
    level: int | str = logging.INFO,
    stream: TextIO | None = sys.stderr,
    max_bytes: int = MAX_BYTES,
    backup_count: int = BACKUP_COUNT,
    logger: logging.Logger | str | None = None,
) -> list[logging.Handler]:
    """JSON lines to a rotating file (and to *stream*, None for none) on *logger* (root).

    The file is *log_file*, else ``<cache_dir>/logs/app.log`` from *settings*, else none.
    Handlers installed by an earlier call are removed first, and so is any other console
    handler (Chainlit's plain one): one line per record on the console. httpx's line per
    request (every readiness poll) is hidden below WARNING.
    """
    target = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
    console = stream is not None
    for old in list(target.handlers):
        ours = getattr(old, _MARK, False)
        other_console = (console and type(old) is logging.StreamHandler
                         and getattr(old, "stream", None) in (sys.stderr, sys.stdout))
        if ours or other_console:
            target.removeHandler(old)
            if ours:
                old.close()
    for chatty in ("httpx", "httpx2"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    path = Path(log_file) if log_file else (default_log_file(settings) if settings else None)
    handlers: list[logging.Handler] = []
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8"
        ))
    if stream is not None:
        handlers.append(logging.StreamHandler(stream))
    formatter = JsonLineFormatter(redact=settings is None or settings.log_pii == "mask")
    for handler in handlers:
        setattr(handler, _MARK, True)
        handler.setFormatter(formatter)
        handler.addFilter(RequestIdFilter())
        target.addHandler(handler)
    target.setLevel(level)
    return handlers


def log_policy_event(event: PolicyEvent) -> None:
    """Policy hook: retries at INFO, give-ups at WARNING, the rest at DEBUG.

    The policy emits "retrying" and "gave_up" from the calling task, so the request id of the
    message being translated is on these lines.
    """
    fields = {"event": event.kind, "attempt": event.attempt}
    if event.kind == "retrying":
        _policy_log.info("model call retrying", extra={**fields, "delay": round(event.delay, 3),
                                                       "error": event.error})
    elif event.kind == "gave_up":
        _policy_log.warning("model call gave up", extra={**fields, "error": event.error})
    elif _policy_log.isEnabledFor(logging.DEBUG):
        _policy_log.debug("model call %s", event.kind, extra={**fields, "ahead": event.ahead})
