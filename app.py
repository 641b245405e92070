"""hymt-chat's chat page: Chainlit events wired to the core (``hymt_chat``), and nothing else.

Run with ``chainlit run app.py`` (or ``hymt-chat up``). Wording, commands, documents, health and
the warm-up wait all live in ``hymt_chat``; this file only moves data between them and Chainlit.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import secrets
import time
import uuid
from collections.abc import Awaitable
from pathlib import PurePath
from typing import Any, TypeVar

import chainlit as cl
from chainlit.auth import get_token_from_cookies
from chainlit.auth.jwt import decode_jwt
from chainlit.config import config as cl_config
from chainlit.context import ChainlitContextException
from chainlit.data import get_data_layer
from chainlit.input_widget import Select, Switch
from chainlit.logger import logger
from chainlit.server import app as server
from chainlit.server import sio
from chainlit.utils import utc_now
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.middleware.cors import CORSMiddleware

from hymt_chat.engine import chimera
from hymt_chat.engine.pacing import eta_seconds
from hymt_chat.engine.policy import PolicyEvent, get_policy, segment_parallelism
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translation, Translator, plan_translation
from hymt_chat.errors import (
    HymtError,
    IncompleteTranslationError,
    InputError,
    InputTooLongError,
    ModelError,
    ModelUnavailableError,
    NotTextError,
    RateLimitedError,
)
from hymt_chat.lang.detect import detect_language
from hymt_chat.lang.languages import get_language
from hymt_chat.modes import chat, documents, kiosk
from hymt_chat.modes import profiles as modes
from hymt_chat.modes.agent import turns as agent
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.chat import AUTO, ChatState
from hymt_chat.service import auth, history, http_guard, logs, web_guard
from hymt_chat.service.health import health_response, is_demo_model
from hymt_chat.service.metrics import get_metrics, outcome_of
from hymt_chat.service.ratelimit import client_address, get_rate_limiter
from hymt_chat.service.readiness import get_readiness
from hymt_chat.settings import get_settings
from hymt_chat.sidecar.private import make_private
from hymt_chat.text.cleanup import clean_text, is_blank

T = TypeVar("T")
SETTINGS = get_settings()
make_private(SETTINGS.cache_dir)  # history, logs, uploads, keys: 0600 files in 0700 folders
logs.configure_logging(SETTINGS)  # JSON lines with a request id, rotating file
READINESS = get_readiness(SETTINGS)
METRICS = get_metrics(SETTINGS)  # hooks the process-wide policy
TRANSLATOR = METRICS.instrument(Translator(SETTINGS))
RATE_LIMITER = get_rate_limiter(SETTINGS)
TRUSTED_PROXIES = frozenset(p.strip() for p in SETTINGS.trusted_proxies.split(",") if p.strip())
get_policy(SETTINGS).add_hook(logs.log_policy_event)
_INPUT_ERRORS = InputError  # every refusal (empty, too long, not text, unknown, bad command)
_QUICK_TARGETS = ("zh", "en", "es", "fr", "ja", "de")
# Socket.IO drops a message over its cap without a word. The cap fits the input limit at its
# worst encoding (12 bytes a character: an emoji as two \uXXXX escapes), so everything under
# the limit arrives and is answered; the page (public/banner.js) does not send text over it.
sio.eio.max_http_buffer_size = max(8 << 20, 12 * SETTINGS.max_input_chars + (1 << 20))
_KEPT_INPUTS = 20  # texts kept per session for the Retry / Swap buttons
# Support agents sign in, and their conversations are kept, only when HYMT_AGENTS lists them.
# Parsed now, so that a bad entry stops the app at start instead of at the first sign-in.
AGENTS = auth.parse_agents(SETTINGS.agents)
HISTORY = bool(AGENTS)
if AGENTS and not os.environ.get("CHAINLIT_AUTH_SECRET"):
    raise SystemExit("HYMT_AGENTS is set, so agents sign in: set CHAINLIT_AUTH_SECRET too "
                     "(make one with `chainlit create-secret`).")


# --- HTTP routes: ours must answer before Chainlit's own /health and catch-all page ----------

_HEADERS = http_guard.security_headers(allow_framing=SETTINGS.allow_framing)
_ORIGINS = frozenset(o.strip().rstrip("/") for o in SETTINGS.allowed_origins.split(",")
                     if o.strip())
# Chainlit's CORS middleware answered every origin ("*" with credentials): only the listed
# others now (the app's own origin needs no CORS). Set before the app starts, when Starlette
# builds its middleware stack.
for _middleware in server.user_middleware:
    if _middleware.cls is CORSMiddleware:
        _middleware.kwargs["allow_origins"] = sorted(_ORIGINS)
# A sign-in lasts hours, not Chainlit's 15 days (the token's expiry is read at each sign-in).
cl_config.project.user_session_timeout = int(SETTINGS.session_hours * 3600)


def _token_user(cookies: dict[str, str], authorization: str | None) -> str | None:
    """Who a request's Chainlit token names (None: no token, or one Chainlit will refuse)."""
    token = get_token_from_cookies(cookies)
    if not token and authorization and authorization.startswith("Bearer "):
        token = authorization.removeprefix("Bearer ").strip()
    if not token:
        return None
    try:
        return decode_jwt(token).identifier
    except Exception:  # noqa: BLE001 - expired or forged: Chainlit answers it with 401
        return None


server.add_middleware(
    web_guard.Guard,
    allowed_origins=_ORIGINS,
    user_of=_token_user if AGENTS else None,
    is_allowed=(lambda name: name in AGENTS) if AGENTS else None,
    throttle=web_guard.LoginThrottle() if AGENTS else None,
    trusted_proxies=TRUSTED_PROXIES,
)


async def _hardened_page(response: Any) -> Response:
    """The page itself: scripts tagged with a fresh nonce, and a CSP that allows only those."""
    body = b"".join([chunk async for chunk in response.body_iterator])
    if response.headers.get("content-encoding") == "gzip":  # Chainlit compresses its page
        body = gzip.decompress(body)
    nonce = secrets.token_urlsafe(16)
    html = http_guard.harden_page(body.decode("utf-8"), nonce)
    headers = {k: v for k, v in response.headers.items() if k.lower() not in
               ("content-length", "content-security-policy", "content-encoding")}
    headers["Content-Security-Policy"] = http_guard.page_policy(
        nonce, allow_framing=SETTINGS.allow_framing)
    return Response(html, status_code=response.status_code, headers=headers,
                    media_type="text/html")


@server.middleware("http")
async def guard(request: Request, call_next: Any) -> Response:
    """Security headers on every answer; Secure cookies over HTTPS (or HYMT_SECURE_COOKIES)."""
    response: Response = await call_next(request)
    if response.headers.get("content-type", "").startswith("text/html"):
        response = await _hardened_page(response)
    for name, value in _HEADERS.items():
        response.headers.setdefault(name, value)
    if SETTINGS.secure_cookies or request.url.scheme == "https":
        raw = [(k, http_guard.secure_cookie(v.decode("latin-1")).encode("latin-1"))
               if k.lower() == b"set-cookie" else (k, v) for k, v in response.raw_headers]
        response.raw_headers[:] = raw
    return response


def _to_front() -> None:
    server.router.routes.insert(0, server.router.routes.pop())


@server.get("/health", include_in_schema=False)
async def health() -> JSONResponse:
    status, body = health_response(await READINESS.refresh())
    return JSONResponse(body, status_code=status)


_to_front()


@server.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    refused = http_guard.metrics_refusal(SETTINGS.metrics_token,
                                         request.headers.get("authorization"), sign_in=HISTORY)
    if refused is not None:
        return JSONResponse({"error": refused[1]}, status_code=refused[0])
    body, content_type = METRICS.render()
    return Response(body, media_type=content_type)


_to_front()


@server.get("/hymt/status", include_in_schema=False)
async def status() -> JSONResponse:
    """For the page's banner (public/banner.js): model state and whether it is the demo."""
    state = await READINESS.current(max_age=3)
    return JSONResponse({"vllm": state, "demo": _demo(), "notice": chat.DEMO_NOTICE,
                         "max_input_chars": SETTINGS.max_input_chars})


_to_front()


def _demo() -> bool:
    return is_demo_model(SETTINGS, READINESS.model_root)


# --- session ---------------------------------------------------------------------------------

def _profile() -> str:
    return modes.profile_name(cl.user_session.get("chat_profile"))


def _is_kiosk() -> bool:
    """For the data layer: is the current session a kiosk (whose writes are skipped)?"""
    try:
        return cl.context.session.chat_profile == kiosk.KIOSK_PROFILE
    except ChainlitContextException:  # a write outside any session (an HTTP route)
        return False


def _state() -> ChatState:
    state = cl.user_session.get("chat")
    if state is None:
        state = ChatState.new(SETTINGS.default_target)
        cl.user_session.set("chat", state)
    return state


def _user_key() -> str:
    """Whose allowance a job draws from: the signed-in agent, else the client's address (a new
    browser session per message is the same person)."""
    user = cl.user_session.get("user")
    if user:
        return f"user:{user.identifier}"
    environ = getattr(cl.context.session, "environ", None) or {}
    peer = (environ.get("asgi.scope") or {}).get("client") or (None, 0)
    return "addr:" + client_address(peer[0], environ.get("HTTP_X_FORWARDED_FOR"),
                                    TRUSTED_PROXIES)


def _job_chars(job: dict[str, Any]) -> int:
    """What a job costs against the character allowance."""
    if "rest" in job:
        return len(job["rest"].text)
    if "doc" in job:
        return len(job["doc"].text)
    return len(next((v for k, v in job.items() if k in ("text", "agent", "kiosk")
                     and isinstance(v, str)), ""))


async def _file_jobs(files: list[Any]) -> list[dict[str, Any]] | None:
    """The message's files, read and checked now (type, size, characters, at most max_files,
    which Chainlit enforces only in the browser); None, said, when one is refused."""
    limit = cl_config.features.spontaneous_file_upload.max_files or 5
    if len(files) > limit:
        await _say(f"At most {limit} files per message; none of these {len(files)} was "
                   "translated. Send them in smaller groups.")
        return None
    jobs = []
    for element in files:
        try:
            doc = await asyncio.to_thread(documents.read_upload, element.path, element.name,
                                          max_chars=SETTINGS.max_input_chars)
        except (HymtError, OSError) as err:
            await _say_error(err if isinstance(err, HymtError) else NotTextError(
                "The uploaded file could not be read; please upload it again."))
            return None
        jobs.append({"file": element.path, "name": element.name, "doc": doc})
    return jobs


async def _admit(chars: int) -> bool:
    """Charge one job of *chars* characters (a message, its files, a button) to its user;
    False, said, when over a limit."""
    try:
        RATE_LIMITER.hit(_user_key(), chars=chars)
    except RateLimitedError as err:
        await _say(str(err))
        return False
    return True


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
    """The job a button stands for; None when it expired or the payload is not one of ours."""
    payload = action.payload if isinstance(action.payload, dict) else {}
    key = payload.get("key")
    return (cl.user_session.get("kept") or {}).get(key) if isinstance(key, str) else None


async def _send_pickers(state: ChatState) -> None:
    inputs: list[Any] = [
        Select(id="source", label="Translate from",
               items=chat.language_choices(include_auto=True), initial_value=state.source),
        Select(id="target", label="Translate into",
               items=chat.language_choices(include_auto=False), initial_value=state.target),
    ]
    if await _best_available():
        inputs.append(Switch(id="best", label="Best quality (Hunyuan-MT-Chimera)",
                             initial=bool(cl.user_session.get("best")),
                             tooltip="Several candidate translations fused into one: slower; "
                                     "text messages only"))
    await cl.ChatSettings(inputs).send()


async def _best_available() -> bool:
    if READINESS.model_root is None:  # the demo model plays Chimera: know which model it is
        await READINESS.current(max_age=5)
    return chimera.chimera_available(SETTINGS, demo=_demo())


async def _send(content: str, actions: list[cl.Action] | None = None,
                elements: list[Any] | None = None) -> cl.Message:
    msg = cl.Message(content=content, actions=actions or [], elements=elements or [])
    await msg.send()
    _track(msg)
    return msg


async def _say(text: str, actions: list[cl.Action] | None = None) -> None:
    await _send(chat.escape_markdown(text), actions)


async def _say_error(err: BaseException, retry: dict[str, Any] | None = None) -> None:
    if isinstance(err, _INPUT_ERRORS):
        await _say(str(err))
        return
    actions = []
    text = str(err) if isinstance(err, HymtError) else chat.UNEXPECTED_ERROR
    if retry is not None and (isinstance(err, ModelError) or not isinstance(err, HymtError)):
        actions.append(cl.Action(name="retry", payload={"key": _keep(retry)}, label="Retry",
                                 icon="refresh-cw", tooltip="Send the same text again"))
        if "press Retry" not in text:
            text = f"{text} {chat.KEPT_HINT}"
    await _say(text, actions)


async def _set_commands(commands: tuple[tuple[str, str, str], ...]) -> None:
    await cl.context.emitter.set_commands([
        {"id": cid, "description": text, "icon": icon, "button": False, "persistent": False}
        for cid, text, icon in commands
    ])


# --- profiles, sign-in, history -------------------------------------------------------------

@cl.set_chat_profiles
async def chat_profiles(user: cl.User | None = None,
                        language: str | None = None) -> list[cl.ChatProfile]:
    return [cl.ChatProfile(name=p.name, markdown_description=p.description, icon=p.icon or None,
                           default=p.name == modes.TRANSLATOR_PROFILE,
                           starters=None if p.starters else [])  # [] hides the starters
            for p in modes.PROFILES]


if AGENTS:  # registering Chainlit's auth callback makes sign-in compulsory: only with agents
    @cl.password_auth_callback
    async def sign_in(username: str, password: str) -> cl.User | None:
        if await auth.authenticate(SETTINGS.agents, username, password):
            return cl.User(identifier=username.strip(), metadata={"role": "agent"})
        return None

if HISTORY:  # Chainlit lists and resumes threads per signed-in user: history needs sign-in
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

    @cl.on_app_startup
    async def create_history_tables() -> None:
        added = await history.ensure_schema(SETTINGS.history_url)
        if added:
            logger.info("history: added columns %s", ", ".join(added))

    @cl.data_layer
    def history_layer() -> SQLAlchemyDataLayer:
        layer_cls = history.skip_writes_when(SQLAlchemyDataLayer, _is_kiosk)  # kiosk: nothing
        layer = layer_cls(conninfo=SETTINGS.history_url)
        history.adapt_sqlite(layer.engine)
        return layer

    @cl.on_chat_resume
    async def resume(thread: dict[str, Any]) -> None:
        _lock()
        READINESS.start()
        profile = _profile()
        if profile == modes.AGENT_PROFILE:
            conv = (modes.agent_state_of(thread.get("metadata"))
                    or Conversation(SETTINGS.default_target))
            await _start_agent(conv, banner=False)
        elif profile == kiosk.KIOSK_PROFILE:  # never stored; a fresh kiosk all the same
            await _start_kiosk()
        else:
            state = _state()
            try:
                state.set_languages(**{k: v for k, v in (cl.user_session.get("chat_settings")
                                                          or {}).items()
                                       if k in ("source", "target") and isinstance(v, str)})
            except HymtError:
                pass
            await _send_pickers(state)
            await _set_commands(chat.COMMANDS)


# --- events ----------------------------------------------------------------------------------

@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in chat.STARTERS]


@cl.on_chat_start
async def start() -> None:
    _lock()
    READINESS.start()
    profile = _profile()
    if profile == modes.AGENT_PROFILE:
        await _start_agent(Conversation(SETTINGS.default_target))
    elif profile == kiosk.KIOSK_PROFILE:
        await _start_kiosk()
    else:
        await _send_pickers(_state())
        await _set_commands(chat.COMMANDS)


@cl.on_settings_update
async def settings_update(values: dict[str, Any]) -> None:
    profile = _profile()
    if profile == modes.AGENT_PROFILE:
        await _agent_settings(values)
        return
    if profile == kiosk.KIOSK_PROFILE:
        return
    cl.user_session.set("best", bool(values.get("best")))
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
    profile = _profile()
    if profile == kiosk.KIOSK_PROFILE:
        _track(msg)
        _kiosk_touch()
        if is_blank(msg.content):
            return
    elif profile == modes.AGENT_PROFILE:
        try:
            command = agent.parse_agent_command(msg.content, msg.command)
        except HymtError as err:
            await _say_error(err)
            return
        if command is not None:
            await _run_agent_command(command)
            return
    else:
        try:
            command = chat.parse_command(msg.content, msg.command)
        except HymtError as err:
            await _say_error(err)
            return
        if command is not None:
            await _run_command(command, _state())
            return
    # Commands are free; everything that reaches the model is charged (per user, by size).
    if profile == kiosk.KIOSK_PROFILE:
        if await _admit(len(msg.content)):
            await _kiosk_text(msg.content)
        return
    if profile == modes.AGENT_PROFILE:
        if await _admit(len(msg.content)):
            await _when_ready({"agent": msg.content})
        return
    jobs = await _file_jobs([el for el in msg.elements or [] if getattr(el, "path", None)])
    if jobs is None:
        return
    if not is_blank(msg.content):
        jobs.append({"text": msg.content})
    size = sum(_job_chars(job) for job in jobs)
    if size > SETTINGS.max_input_chars:  # files count against the same limit as text
        await _say(str(InputTooLongError(size, SETTINGS.max_input_chars)))
        return
    if jobs and await _admit(size):
        for job in jobs:
            await _when_ready(job)


@cl.action_callback("retry")
@cl.action_callback("retry_rest")
async def retry(action: cl.Action) -> None:
    """Send the kept job again; for Retry the rest that job holds only the missing parts."""
    _kiosk_touch()
    job = _kept(action)
    await action.remove()
    await _rerun(job)


async def _rerun(job: dict[str, Any] | None) -> None:
    """Run a button's kept job again: said when it expired; charged like a message."""
    if job is None:
        await _say(chat.EXPIRED_JOB)
        return
    if await _admit(_job_chars(job)):
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
    await _rerun(_kept(action))


@cl.action_callback("translate_into")
async def translate_into(action: cl.Action) -> None:
    state = _state()
    try:  # the payload comes from the browser: check it like any input
        state.set_languages(target=str(action.payload.get("target", "")))
    except HymtError as err:
        await _say_error(err)
        return
    await _send_pickers(state)
    await _say(chat.settings_changed_message(state))
    await _rerun(_kept(action))


@cl.on_stop
async def stop() -> None:
    _cancel_waiting()


@cl.on_chat_end
async def end() -> None:
    """The tab closed: drop its queued messages, close its in-flight call (vLLM aborts), and let
    go of what it kept — texts for buttons, partial translations, the message list — at once:
    Chainlit keeps a closed session for its reconnect window, which held every large paste in
    memory for an hour. (A tab that does reconnect is told its old buttons' texts are gone.)"""
    _cancel_waiting()
    watcher = cl.user_session.get("kiosk_watch")
    if watcher is not None:
        watcher.cancel()
    task = cl.context.session.current_task
    if task is not None and not task.done():
        task.cancel()
    for key in ("kept", "kiosk_text", "kiosk_shown"):
        cl.user_session.set(key, None)
    cl.chat_context.clear()


# --- support agent ----------------------------------------------------------------------------

def _conversation() -> Conversation:
    conv = cl.user_session.get("conversation")
    if conv is None:
        conv = Conversation(SETTINGS.default_target)
        cl.user_session.set("conversation", conv)
    return conv


async def _start_agent(conv: Conversation, *, banner: bool = True) -> None:
    cl.user_session.set("conversation", conv)
    options = agent.AgentOptions.from_settings(SETTINGS)
    switches = cl.user_session.get("agent_switches")
    if not isinstance(switches, dict):
        switches = {"back_translate": options.back_translate, "use_context": options.use_context}
        cl.user_session.set("agent_switches", switches)
    await _send_agent_settings(conv)
    await _set_commands(agent.AGENT_COMMANDS)
    if banner:
        await _agent_banner(conv)


async def _send_agent_settings(conv: Conversation) -> None:
    switches = cl.user_session.get("agent_switches") or {}
    await cl.ChatSettings([
        Select(id="agent_language", label="Your language (the agent's)",
               items=chat.language_choices(include_auto=False),
               initial_value=conv.agent_language),
        Switch(id="back_translate", label="Check before sending (back-translate my replies)",
               initial=bool(switches.get("back_translate"))),
        Switch(id="use_context", label="Send the last few turns as context",
               initial=bool(switches.get("use_context"))),
    ]).send()


async def _agent_banner(conv: Conversation) -> None:
    await _send(f"**{chat.escape_markdown(conv.banner())}**")


async def _agent_settings(values: dict[str, Any]) -> None:
    conv = _conversation()
    cl.user_session.set("agent_switches", {"back_translate": bool(values.get("back_translate")),
                                           "use_context": bool(values.get("use_context"))})
    language = values.get("agent_language")
    if language and language != conv.agent_language:
        try:
            conv.set_agent_language(language)
        except HymtError as err:
            await _send_agent_settings(conv)  # put the picker back
            await _say_error(err)
            return
        await _agent_banner(conv)
    await _save_agent(conv)


async def _run_agent_command(command: agent.AgentCommand) -> None:
    conv = _conversation()
    try:
        reply = agent.run_agent_command(conv, command)
    except HymtError as err:
        await _say_error(err)
        return
    files = [cl.File(name=f.name, content=f.content, mime=f.mime, display="inline")
             for f in reply.files]
    await _send(chat.escape_markdown(reply.text), elements=files)
    if reply.banner_changed:
        await _send_agent_settings(conv)  # /agent changes the picker's value
        await _agent_banner(conv)
    await _save_agent(conv)


async def _agent_turn(job: dict[str, Any]) -> None:
    conv = _conversation()
    switches = cl.user_session.get("agent_switches") or {}
    progress = _Progress("Translating")
    result = await _finished(progress, job, agent.handle_agent_message(
        conv, job["agent"], TRANSLATOR, SETTINGS,
        back_translate=bool(switches.get("back_translate")),
        use_context=bool(switches.get("use_context")),
        user=cl.context.session.id, on_progress=progress.progress, on_event=progress.event,
    ))
    if result is None:
        return
    await _send(agent.turn_markdown(result, demo=_demo()))
    if result.route.pair_changed:
        await _agent_banner(conv)
    await _save_agent(conv)


async def _save_agent(conv: Conversation) -> None:
    """Keep the conversation for a resume: in the session (Chainlit saves it into the thread's
    metadata when the tab closes) and at once in the thread (a server restart loses nothing)."""
    state = conv.to_dict()
    cl.user_session.set(modes.AGENT_STATE, state)
    layer = get_data_layer() if HISTORY else None
    thread_id = cl.context.session.thread_id
    if layer is None or not getattr(cl.context.session, "has_first_interaction", False):
        return
    try:
        await layer.update_thread(thread_id, metadata={"chat_profile": modes.AGENT_PROFILE,
                                                       modes.AGENT_STATE: state})
    except Exception:  # noqa: BLE001 - history is a convenience: never fail a turn over it
        logger.exception("could not save the conversation to the history database")


# --- kiosk -------------------------------------------------------------------------------------

_PICK = "pick"  # the "Another language" button of a kiosk answer


def _track(msg: cl.Message) -> None:
    """Kiosk: remember what is on screen, so that an idle reset can take it all away."""
    if _is_kiosk():
        shown: list[cl.Message] = cl.user_session.get("kiosk_shown") or []
        shown.append(msg)
        cl.user_session.set("kiosk_shown", shown)


def _kiosk_marker(text: str = "", target: str | None = None) -> cl.CustomElement:
    props = kiosk.marker_props(idle_seconds=SETTINGS.kiosk_idle_seconds, text=text,
                               target=target)
    return cl.CustomElement(name=kiosk.MARKER_ELEMENT, props=props, display="inline")


def _kiosk_actions(buttons: list[kiosk.KioskButton]) -> list[cl.Action]:
    return [cl.Action(name="kiosk_target", payload={"target": b.value}, label=b.label)
            for b in buttons]


async def _start_kiosk() -> None:
    await cl.ChatSettings([]).send()  # nothing to set on a kiosk
    await _set_commands(())
    _kiosk_touch(activity=False)
    await _kiosk_welcome()


async def _kiosk_welcome() -> None:
    await _send(chat.escape_markdown(kiosk.welcome_message(SETTINGS.kiosk_idle_seconds)),
                _kiosk_actions(kiosk.kiosk_buttons()), [_kiosk_marker()])


def _kiosk_touch(*, activity: bool = True) -> None:
    """Someone used the kiosk: restart its idle clock (and its watcher, if a dropped connection
    ended it). A no-op in the other profiles."""
    if _profile() != kiosk.KIOSK_PROFILE:
        return
    idle = SETTINGS.kiosk_idle_seconds
    timer = cl.user_session.get("kiosk_timer")
    if timer is None:
        timer = kiosk.IdleTimer(idle)
        cl.user_session.set("kiosk_timer", timer)
    if activity:
        timer.touch()
    watcher = cl.user_session.get("kiosk_watch")
    if watcher is None or watcher.done():
        watcher = asyncio.create_task(
            kiosk.watch_idle(timer, _kiosk_reset, grace=kiosk.server_grace(idle)))
        cl.user_session.set("kiosk_watch", watcher)


async def _kiosk_reset() -> None:
    """The server's backstop of the browser's own reset: wipe the screen and the session."""
    _cancel_waiting()
    for msg in cl.user_session.get("kiosk_shown") or []:
        try:
            await msg.remove()
        except Exception:  # noqa: BLE001 - the tab may be gone: nothing to remove from
            logger.debug("kiosk reset: could not remove a message", exc_info=True)
    for key in ("kiosk_shown", "kiosk_target", "kiosk_text", "kept", "chat"):
        cl.user_session.set(key, None)
    cl.chat_context.clear()
    await _kiosk_welcome()


async def _kiosk_text(text: str) -> None:
    cl.user_session.set("kiosk_text", text)
    target = cl.user_session.get("kiosk_target")
    if target is None:
        await _send(chat.escape_markdown(modes.kiosk_pick_message()),
                    _kiosk_actions(kiosk.kiosk_buttons()))
        return
    await _when_ready({"kiosk": text, "target": target})


@cl.action_callback("kiosk_target")
async def kiosk_target(action: cl.Action) -> None:
    _kiosk_touch()
    target = action.payload.get("target")
    if target in (kiosk.MORE, _PICK):  # "More languages", or "Another language" on an answer
        buttons = kiosk.more_buttons() if target == kiosk.MORE else kiosk.kiosk_buttons()
        await _send(chat.escape_markdown(modes.kiosk_pick_message()), _kiosk_actions(buttons))
        return
    try:  # the payload comes from the browser: a code of ours, or nothing is stored
        target = get_language(target).code
    except HymtError as err:
        await _say_error(err)
        return
    cl.user_session.set("kiosk_target", target)
    text = cl.user_session.get("kiosk_text")
    if text and await _admit(len(text)):  # a text on screen: into the language tapped
        await _when_ready({"kiosk": text, "target": target})
    else:
        await _say(modes.kiosk_target_message(target, action.label))


async def _kiosk_translate(job: dict[str, Any]) -> None:
    progress = _Progress("Translating")
    result = await _finished(progress, job, TRANSLATOR.translate(
        job["kiosk"], job["target"], AUTO, user=cl.context.session.id,
        on_progress=progress.progress, on_event=progress.event,
    ))
    if result is None:
        return
    if result.same_language:
        await _send(chat.escape_markdown(modes.kiosk_same_message(result.target)),
                    _kiosk_actions(kiosk.kiosk_buttons()))
        return
    meta = chat.format_meta(result, demo=_demo())
    await _send(chat.answer_markdown(result.text, meta),
                [cl.Action(name="kiosk_target", payload={"target": _PICK},
                           label="Another language · 其他语言", icon="languages")],
                [_kiosk_marker(result.text, result.target)])


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
    inline = asyncio.current_task() is cl.context.session.current_task
    if model == "ready" and not waiting and inline:
        async with _lock():  # the message's own task: Chainlit's Stop cancels it
            await _run(job)
        return
    if model == "down" and not waiting:
        await _say_error(ModelUnavailableError(chat.model_down_message()), retry=job)
        return
    # Starting or restarting, earlier messages still queued, or started by a button (whose
    # HTTP request must return, and which Stop and a closed tab must still reach): run it as a
    # task of the session's queue, in order.

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
        if "rest" in job:
            await _translate_rest(job)
        elif "file" in job:
            await _translate_file(job)
        elif "agent" in job:
            await _agent_turn(job)
        elif "kiosk" in job:
            await _kiosk_translate(job)
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
        self.started = time.monotonic()
        self.base = 0  # parts done before this run (a Retry the rest): not this run's pace

    def _name(self) -> str:
        parts = [self.title]
        if self.total > 1:
            eta = eta_seconds(self.done - self.base, self.total - self.base,
                              time.monotonic() - self.started)
            parts.append(chat.progress_label(self.done, self.total, eta))
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


async def _finished(progress: _Progress, job: dict[str, Any], work: Awaitable[T]) -> T | None:
    """Await a translation under its progress step. A failure closes the step as failed and
    becomes one message with a Retry button for the same job; None tells the caller to stop."""
    try:
        result = await work
    except IncompleteTranslationError as err:
        await progress.finish(failed=True)
        await _say_partial(err, job)
        return None
    except HymtError as err:
        await progress.finish(failed=True)
        await _say_error(err, retry=job)
        return None
    await progress.finish()
    return result


async def _say_partial(err: IncompleteTranslationError, job: dict[str, Any]) -> None:
    """Everything translated so far, in place, and a button that resends only the rest."""
    rest = {**{k: v for k, v in job.items() if k != "rest"}, "rest": err.partial,
            "done": err.done}
    actions = [cl.Action(name="retry_rest", payload={"key": _keep(rest)},
                         label="Retry the rest", icon="refresh-cw",
                         tooltip="Translate only the parts marked [not translated]")]
    elements: list[Any] = []
    text = err.partial.text  # type: ignore[attr-defined]
    if "file" in job:
        doc = job.get("doc")
        if doc is not None:
            full = PurePath(documents.output_name(doc.name, job["target"]))
            name = f"{full.stem}.partial{full.suffix}"
            elements.append(cl.File(name=name, content=doc.encode(text), mime=doc.mime,
                                    display="inline"))
        content = f"{chat.escape_markdown(str(err))} {chat.RETRY_REST_HINT}"
    else:
        content = chat.partial_answer_markdown(text, str(err))
    await _send(content, actions, elements)


async def _translate_rest(job: dict[str, Any]) -> None:
    """Retry the rest: the kept partial translation, only its missing parts sent."""
    partial = job["rest"]
    progress = _Progress("Translating the rest", always="file" in job)
    progress.base = int(job.get("done", 0))
    session = cl.context.session.id
    if "file" in job:
        await progress.start()
        out = await _finished(progress, job, documents.translate_document_rest(
            partial, _document_translate(job["target"], job["source"], progress),
            resume=_document_resume(progress), on_progress=progress.progress,
            concurrency=_document_share,
        ))
        if out is not None:
            await _send_file(job["doc"], job["target"], job["source"], job["detected"], out,
                             progress)
        return
    result = await _finished(progress, job, TRANSLATOR.translate_rest(
        partial, user=session, on_progress=progress.progress, on_event=progress.event))
    if result is not None:
        await cl.Message(content=chat.answer_markdown(
            result.text, chat.format_meta(result, demo=_demo()))).send()


def _document_share() -> int:
    """Pieces of a file translated at once: the documents' share of the window."""
    return segment_parallelism(TRANSLATOR.policy, SETTINGS.segment_concurrency, BULK)


def _document_translate(target: str, source: str | None, progress: _Progress) -> Any:
    session = cl.context.session.id

    async def translate(text: str, *, on_progress: Any = None) -> str:
        result = await TRANSLATOR.translate(text, target, source or AUTO, user=session,
                                            on_progress=on_progress, on_event=progress.event,
                                            klass=BULK)
        return result.text

    return translate


def _document_resume(progress: _Progress) -> Any:
    session = cl.context.session.id

    async def resume(partial: Any, *, on_progress: Any = None) -> str:
        result = await TRANSLATOR.translate_rest(partial, user=session, on_progress=on_progress,
                                                 on_event=progress.event)
        return result.text

    return resume


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
    best = bool(cl.user_session.get("best")) and await _best_available()
    progress = _Progress("Translating · best quality" if best else "Translating")
    if best:
        fused = await _finished(progress, job, _translate_best(text, state, progress))
        if fused is None:
            return
        result = fused.translation
    else:
        plain = await _finished(progress, job, TRANSLATOR.translate(
            text, state.target, state.source, user=cl.context.session.id,
            on_progress=progress.progress, on_event=progress.event,
        ))
        if plain is None:
            return
        result = plain
    state.remember(result.source)
    meta = chat.format_meta(result, demo=_demo())
    if best:
        note = modes.best_meta(meta, chimera.best_note(fused), downgraded=fused.downgraded)
        await cl.Message(content=f"{chat.literal_block(result.text)}\n\n{note}").send()
    else:
        await cl.Message(content=chat.answer_markdown(result.text, meta)).send()


async def _translate_best(text: str, state: ChatState, progress: _Progress
                          ) -> chimera.BestTranslation:
    """Best quality through the translator inside METRICS' wrapper (chimera re-sizes segments
    with a Translator of its own), counted in /metrics like any translation."""
    started = time.monotonic()
    try:
        fused = await chimera.translate_best(
            TRANSLATOR.wrapped, text, state.target, state.source, user=cl.context.session.id,
            on_progress=progress.progress, on_event=progress.event,
        )
    except Exception as err:
        METRICS.observe_translation(state.source, state.target, outcome_of(err))
        raise
    result = fused.translation
    METRICS.observe_translation(result.source, result.target,
                                "same_language" if result.same_language else "ok",
                                time.monotonic() - started)
    return fused


async def _translate_file(job: dict[str, Any]) -> None:
    state = _state()
    started = time.monotonic()
    doc: documents.Document = job["doc"]  # read and checked when the message came (_file_jobs)
    detected = state.source == AUTO
    source = (await asyncio.to_thread(documents.detect_document_language, doc)
              if detected else state.source)
    if source == state.target:
        state.remember(source)
        await _same_language(state, job)
        return
    target = state.target
    progress = _Progress(f"Translating {doc.name}", always=True)
    job = {**job, "doc": doc, "target": target, "source": source, "detected": detected}
    await progress.start()
    out = await _finished(progress, job, documents.translate_document(
        doc, _document_translate(target, source, progress), resume=_document_resume(progress),
        on_progress=progress.progress, concurrency=_document_share,
    ))
    if out is None:
        return
    state.remember(source)
    await _send_file(doc, target, source, detected, out, progress, started)


async def _send_file(doc: documents.Document, target: str, source: str | None, detected: bool,
                     out: str, progress: _Progress, started: float | None = None) -> None:
    name = documents.output_name(doc.name, target)
    result = Translation(out, source, target, detected, False, max(1, progress.total),
                         time.monotonic() - (started or progress.started))
    meta = chat.format_meta(result, demo=_demo())
    await cl.Message(
        content=chat.file_answer_markdown(doc.name, name, meta),
        elements=[cl.File(name=name, content=doc.encode(out), mime=doc.mime, display="inline")],
    ).send()
