"""hymt-chat's chat page: Chainlit events wired to the core (``hymt_chat``), and nothing else.

Run with ``chainlit run app.py`` (or ``hymt-chat up``). Wording, commands, documents, health and
the warm-up wait all live in ``hymt_chat``; this file only moves data between them and Chainlit.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import chainlit as cl
from chainlit.input_widget import Select
from chainlit.logger import logger
from chainlit.server import app as server
from chainlit.server import sio
from chainlit.utils import utc_now
from fastapi.responses import JSONResponse, Response

from hymt_chat import chat, documents, logs
from hymt_chat.chat import AUTO, ChatState
from hymt_chat.detect import detect_language
from hymt_chat.errors import (
    EmptyTextError,
    HymtError,
    InputTooLongError,
    ModelError,
    ModelUnavailableError,
    NotTextError,
    RateLimitedError,
    UnknownLanguageError,
)
from hymt_chat.health import health_response, is_demo_model
from hymt_chat.metrics import get_metrics
from hymt_chat.policy import PolicyEvent, get_policy
from hymt_chat.ratelimit import get_rate_limiter
from hymt_chat.readiness import get_readiness
from hymt_chat.settings import get_settings
from hymt_chat.text import clean_text, is_blank
from hymt_chat.translator import Translation, Translator, plan_translation

SETTINGS = get_settings()
logs.configure_logging(SETTINGS)  # JSON lines with a request id, rotating file
READINESS = get_readiness(SETTINGS)
METRICS = get_metrics(SETTINGS)  # hooks the process-wide policy
TRANSLATOR = METRICS.instrument(Translator(SETTINGS))
RATE_LIMITER = get_rate_limiter(SETTINGS)
get_policy(SETTINGS).add_hook(logs.log_policy_event)
_INPUT_ERRORS = (EmptyTextError, InputTooLongError, NotTextError, UnknownLanguageError,
                 chat.CommandError, documents.DocumentError)
_QUICK_TARGETS = ("zh", "en", "es", "fr", "ja", "de")
# Socket.IO drops messages over 1 MB by default, silently: let a 1 MB paste through so that the
# core can answer it (translated, or refused with the limit stated).
sio.eio.max_http_buffer_size = max(8 << 20, 4 * SETTINGS.max_input_chars + (1 << 20))
_KEPT_INPUTS = 20  # texts kept per session for the Retry / Swap buttons


# --- HTTP routes: ours must answer before Chainlit's own /health and catch-all page ----------

def _to_front() -> None:
    server.router.routes.insert(0, server.router.routes.pop())


@server.get("/health", include_in_schema=False)
async def health() -> JSONResponse:
    status, body = health_response(await READINESS.refresh())
    return JSONResponse(body, status_code=status)


_to_front()


@server.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    body, content_type = METRICS.render()
    return Response(body, media_type=content_type)


_to_front()


@server.get("/hymt/status", include_in_schema=False)
async def status() -> JSONResponse:
    """For the page's banner (public/banner.js): model state and whether it is the demo."""
    state = await READINESS.current(max_age=3)
    return JSONResponse({"vllm": state, "demo": _demo(), "notice": chat.DEMO_NOTICE})


_to_front()


def _demo() -> bool:
    return is_demo_model(SETTINGS, READINESS.model_root)


# --- session ---------------------------------------------------------------------------------

def _state() -> ChatState:
    state = cl.user_session.get("chat")
    if state is None:
        state = ChatState.new(SETTINGS.default_target)
        cl.user_session.set("chat", state)
    return state


def _user_key() -> str:
    user = cl.user_session.get("user")
    return f"user:{user.identifier}" if user else f"session:{cl.context.session.id}"


def _lock() -> asyncio.Lock:
    lock = cl.user_session.get("lock")
    if lock is None:
        lock = asyncio.Lock()
        cl.user_session.set("lock", lock)
    return lock


def _keep(job: dict[str, Any]) -> str:
    """Keep a text (or file) server-side for a button; the button carries only its key."""
    kept: dict[str, dict[str, Any]] = cl.user_session.get("kept") or {}
    key = uuid.uuid4().hex
    kept[key] = job
    while len(kept) > _KEPT_INPUTS:
        kept.pop(next(iter(kept)))
    cl.user_session.set("kept", kept)
    return key


def _kept(action: cl.Action) -> dict[str, Any] | None:
    return (cl.user_session.get("kept") or {}).get(action.payload.get("key", ""))


async def _send_pickers(state: ChatState) -> None:
    await cl.ChatSettings([
        Select(id="source", label="Translate from",
               items=chat.language_choices(include_auto=True), initial_value=state.source),
        Select(id="target", label="Translate into",
               items=chat.language_choices(include_auto=False), initial_value=state.target),
    ]).send()


async def _say(text: str, actions: list[cl.Action] | None = None) -> None:
    await cl.Message(content=chat.escape_markdown(text), actions=actions or []).send()


async def _say_error(err: BaseException, retry: dict[str, Any] | None = None) -> None:
    if isinstance(err, _INPUT_ERRORS):
        await _say(str(err))
        return
    actions = []
    if retry is not None and (isinstance(err, ModelError) or not isinstance(err, HymtError)):
        actions.append(cl.Action(name="retry", payload={"key": _keep(retry)}, label="Retry",
                                 icon="refresh-cw", tooltip="Send the same text again"))
    await _say(str(err) if isinstance(err, HymtError) else chat.UNEXPECTED_ERROR, actions)


# --- events ----------------------------------------------------------------------------------

@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in chat.STARTERS]


@cl.on_chat_start
async def start() -> None:
    state = _state()
    _lock()
    await _send_pickers(state)
    await cl.context.emitter.set_commands([
        {"id": cid, "description": text, "icon": icon, "button": False, "persistent": False}
        for cid, text, icon in chat.COMMANDS
    ])
    READINESS.start()


@cl.on_settings_update
async def settings_update(values: dict[str, Any]) -> None:
    state = _state()
    try:
        changed = state.set_languages(values.get("source"), values.get("target"))
    except HymtError as err:
        await _say_error(err)
        return
    if changed:
        await _say(chat.settings_changed_message(state))


@cl.on_message
async def message(msg: cl.Message) -> None:
    logs.bind_request_id()
    state = _state()
    try:
        command = chat.parse_command(msg.content, msg.command)
    except HymtError as err:
        await _say_error(err)
        return
    if command is not None:
        await _run_command(command, state)
        return
    try:  # per user when signed in, per session otherwise; commands are free
        RATE_LIMITER.hit(_user_key())
    except RateLimitedError as err:
        await _say(str(err))
        return
    files = [el for el in msg.elements or [] if getattr(el, "path", None)]
    if files:
        for element in files:
            await _when_ready({"file": element.path, "name": element.name})
        if is_blank(msg.content):
            return
    await _when_ready({"text": msg.content})


@cl.action_callback("retry")
async def retry(action: cl.Action) -> None:
    job = _kept(action)
    if job is not None:
        await action.remove()
        await _when_ready(job)


@cl.action_callback("swap")
async def swap(action: cl.Action) -> None:
    state = _state()
    try:
        state.swap()
    except HymtError as err:
        await _say_error(err)
        return
    await action.remove()
    await _send_pickers(state)
    await _say(chat.settings_changed_message(state))
    job = _kept(action)
    if job is not None:
        await _when_ready(job)


@cl.action_callback("translate_into")
async def translate_into(action: cl.Action) -> None:
    state = _state()
    state.set_languages(target=action.payload["target"])
    await _send_pickers(state)
    await _say(chat.settings_changed_message(state))
    job = _kept(action)
    if job is not None:
        await _when_ready(job)


@cl.on_stop
async def stop() -> None:
    _cancel_waiting()


@cl.on_chat_end
async def end() -> None:
    """The tab closed: drop its queued messages and close its in-flight call (vLLM aborts)."""
    _cancel_waiting()
    task = cl.context.session.current_task
    if task is not None and not task.done():
        task.cancel()


# --- commands ---------------------------------------------------------------------------------

async def _run_command(command: chat.Command, state: ChatState) -> None:
    try:
        if isinstance(command, chat.ToCommand):
            state.set_languages(target=command.language.code)
        elif isinstance(command, chat.SwapCommand):
            state.swap()
        elif isinstance(command, chat.ResetCommand):
            state.reset(SETTINGS.default_target)
        elif isinstance(command, chat.DetectCommand):
            if command.text.strip():
                await _say(chat.detect_message(detect_language(clean_text(command.text))))
            else:
                await _say(chat.last_detected_message(state.last_detected))
            return
    except HymtError as err:
        await _say_error(err)
        return
    await _send_pickers(state)
    await _say(chat.settings_changed_message(state))


# --- warm-up: messages wait for the model, in order -------------------------------------------

def _cancel_waiting() -> None:
    for task in cl.user_session.get("waiting") or set():
        task.cancel()


async def _when_ready(job: dict[str, Any]) -> None:
    """Run a job now if the model is ready; while it starts, queue it and say so."""
    waiting: set[asyncio.Task[None]] = cl.user_session.get("waiting") or set()
    cl.user_session.set("waiting", waiting)
    model = await READINESS.current(max_age=5)
    if model == "ready" and not waiting:
        async with _lock():
            await _run(job)
        return
    if model == "down" and not waiting:
        await _say_error(ModelUnavailableError(chat.model_down_message()), retry=job)
        return
    # Starting or restarting (or earlier messages still queued): wait behind them, in order.

    async def later() -> None:
        try:
            if not await READINESS.wait_ready(SETTINGS.startup_timeout):
                message = chat.still_not_ready_message(SETTINGS.startup_timeout)
                await _say_error(ModelUnavailableError(message), retry=job)
                return
            async with _lock():
                await _run(job)
        finally:
            waiting.discard(task)

    task = asyncio.create_task(later())
    waiting.add(task)
    if model != "ready":
        await _say(chat.warming_up_message(model, len(waiting)))


async def _run(job: dict[str, Any]) -> None:
    try:
        if "file" in job:
            await _translate_file(job)
        else:
            await _translate_text(job["text"])
    except Exception as err:  # a bug must cost one message, not the session
        logger.exception("translation job failed")
        await _say_error(err, retry=job)


# --- translating ------------------------------------------------------------------------------

class _Progress:
    """A step in the chat that shows parts done and any wait; created only when there is news."""

    def __init__(self, title: str, always: bool = False) -> None:
        self.title = title
        self.step: cl.Step | None = None
        self.done = self.total = 0
        self.note: str | None = None
        self.last = 0.0
        self.always = always
        self.lock = asyncio.Lock()

    def _name(self) -> str:
        parts = [self.title]
        if self.total > 1:
            parts.append(f"{self.done} of {self.total} parts")
        if self.note:
            parts.append(self.note)
        return " · ".join(parts)

    async def _show(self, force: bool = False) -> None:
        async with self.lock:  # policy events arrive from several segments at once
            await self._show_now(force)

    async def _show_now(self, force: bool) -> None:
        if self.step is None:
            parent = cl.context.current_step  # the on_message run, so it shows above the answer
            self.step = cl.Step(name=self._name(), type="tool", show_input=False, icon="languages",
                                parent_id=parent.id if parent else None)
            self.step.start = utc_now()
            await self.step.send()
        elif force or time.monotonic() - self.last > 0.4:
            self.step.name = self._name()
            await self.step.update()
        self.last = time.monotonic()

    async def start(self) -> None:
        if self.always:
            await self._show()

    async def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if total > 1 or self.step is not None:
            self.note = None
            await self._show(force=done == total)

    def event(self, event: PolicyEvent) -> None:
        note = chat.describe_event(event)
        if note is not None or (self.note and event.kind == "started"):
            self.note = note
            asyncio.get_running_loop().create_task(self._show(force=True))

    async def finish(self, failed: bool = False) -> None:
        async with self.lock:
            if self.step is not None:
                self.note = None
                self.step.name = self._name()
                self.step.end = utc_now()
                self.step.is_error = failed
                await self.step.update()


async def _same_language(state: ChatState, job: dict[str, Any]) -> None:
    can_swap = state.source != AUTO or state.previous not in (None, state.target)
    key = _keep(job)
    if can_swap:
        actions = [cl.Action(name="swap", payload={"key": key}, icon="arrow-left-right",
                             label="Swap languages and translate")]
    else:
        actions = [cl.Action(name="translate_into", payload={"key": key, "target": code},
                             label=chat.language_name(code))
                   for code in _QUICK_TARGETS if code != state.target]
    await _say(chat.same_language_message(state.target, can_swap=can_swap), actions)


async def _translate_text(text: str) -> None:
    state = _state()
    job = {"text": text}
    try:
        plan = plan_translation(text, state.target, state.source, SETTINGS)
    except HymtError as err:
        await _say_error(err)
        return
    if plan.same_language:
        state.remember(plan.source)
        await _same_language(state, job)
        return
    progress = _Progress("Translating")
    try:
        result = await TRANSLATOR.translate(
            text, state.target, state.source, user=cl.context.session.id,
            on_progress=progress.progress, on_event=progress.event,
        )
    except HymtError as err:
        await progress.finish(failed=True)
        await _say_error(err, retry=job)
        return
    await progress.finish()
    state.remember(result.source)
    meta = chat.format_meta(result, demo=_demo())
    await cl.Message(content=chat.answer_markdown(result.text, meta)).send()


async def _translate_file(job: dict[str, Any]) -> None:
    state = _state()
    started = time.monotonic()
    try:
        doc = documents.read_upload(job["file"], job["name"])
    except (HymtError, OSError) as err:
        await _say_error(err if isinstance(err, HymtError) else NotTextError(
            "The uploaded file could not be read; please upload it again."))
        return
    detected = state.source == AUTO
    source = documents.detect_document_language(doc) if detected else state.source
    if source == state.target:
        state.remember(source)
        await _same_language(state, job)
        return
    target, session = state.target, cl.context.session.id
    progress = _Progress(f"Translating {doc.name}", always=True)

    async def translate(text: str, *, on_progress: Any = None) -> str:
        result = await TRANSLATOR.translate(text, target, source or AUTO, user=session,
                                            on_progress=on_progress, on_event=progress.event)
        return result.text

    await progress.start()
    try:
        out = await documents.translate_document(
            doc, translate, on_progress=progress.progress,
            concurrency=SETTINGS.segment_concurrency,
        )
    except HymtError as err:
        await progress.finish(failed=True)
        await _say_error(err, retry=job)
        return
    await progress.finish()
    state.remember(source)
    name = documents.output_name(doc.name, target)
    result = Translation(out, source, target, detected, False, max(1, progress.total),
                         time.monotonic() - started)
    meta = chat.format_meta(result, demo=_demo())
    await cl.Message(
        content=chat.file_answer_markdown(doc.name, name, meta),
        elements=[cl.File(name=name, content=doc.encode(out), mime=doc.mime, display="inline")],
    ).send()
