"""hymt-chat's chat page: Chainlit events wired to the core (``hymt_chat``), and nothing else.

Run with ``chainlit run app.py`` (or ``hymt-chat up``). Each tab gets a session of its mode
(``hymt_chat.modes``) that holds the state and decides; this file routes Chainlit's events to
it; ``presenter.py`` shows what a session shows as Chainlit messages."""

from __future__ import annotations

import asyncio
import gc
import importlib
import os
from typing import Any

import chainlit as cl
from chainlit.config import config as cl_config
from chainlit.context import ChainlitContextException
from chainlit.logger import logger
from chainlit.server import app as server
from chainlit.server import sio
from chainlit.types import ThreadDict
from chainlit.utils import wrap_user_function

import chainlit_edge as edge
from hymt_chat.api import routes as api
from hymt_chat.modes import documents, kiosk, wording
from hymt_chat.modes import profiles as modes
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.kiosk_session import KioskSession
from hymt_chat.modes.runtime import Runtime
from hymt_chat.modes.screen import storing
from hymt_chat.modes.session import BUTTONS, Session, Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.room import chat_words, counter, desk_page
from hymt_chat.room import page as room_page
from hymt_chat.room.desk_relay import DeskRelay
from hymt_chat.room.words import PageWords
from hymt_chat.service import auth, history, logs, web
from hymt_chat.service.nonblocking import drop_blocking_sleep
from hymt_chat.settings import get_settings
from hymt_chat.sidecar.private import make_private
from presenter import Screen, first_naming, name_from, own_controls, profiles_shown, starters_shown

# Chainlit sleeps 1 ms in every Message/Step constructor, on the event loop (benchmarks/app_ceiling).
drop_blocking_sleep(*(importlib.import_module(f"chainlit.{m}") for m in ("message", "step")))
SETTINGS = get_settings()
make_private(SETTINGS.cache_dir)  # history, logs, uploads, keys: 0600 files in 0700 folders
# Chainlit's files in a folder of this process's own (Chainlit deletes it when it stops).
FILES = web.own_files(SETTINGS.cache_dir, *map(importlib.import_module,
                                                 ("chainlit.config", "chainlit.server")))
logs.configure_logging(SETTINGS)  # JSON lines with a request id, rotating file
# Everything the sessions, routes and background tasks share, kept on the server's state (as a
# Starlette app keeps its own), started and closed with Chainlit's lifespan below.
RUNTIME = server.state.runtime = Runtime(SETTINGS)
SERVICES = RUNTIME.services(documents.MAX_FILES)  # the page lets more through: the app says so
RUNTIME.policy.add_hook(logs.log_policy_event)
# Socket.IO drops a message over its cap without a word. The cap fits the input limit at its
# worst encoding (web.frame_cap): all under the limit arrives; the page sends nothing over it.
sio.eio.max_http_buffer_size = web.frame_cap(SETTINGS)
# Agents sign in (their conversations kept) only when HYMT_AGENTS lists them; parsed now: a bad
# entry stops the app at start, not at the first sign-in.
AGENTS = auth.parse_agents(SETTINGS.agents)
HISTORY = bool(AGENTS)
if AGENTS and not os.environ.get("CHAINLIT_AUTH_SECRET"):
    raise SystemExit("HYMT_AGENTS is set, so agents sign in: set CHAINLIT_AUTH_SECRET too "
                     "(make one with `chainlit create-secret`).")

# --- HTTP: guards, and our routes ahead of Chainlit's /health and catch-all page -------------
# A sign-in lasts hours, not Chainlit's 15 days (the token's expiry is read at each sign-in).
cl_config.project.user_session_timeout = int(SETTINGS.session_hours * 3600)


web.install_guards(server, SETTINGS, user_of=edge.token_user if AGENTS else None,
                   is_allowed=auth.token_check(AGENTS) if AGENTS else None, sign_in=HISTORY,
                   max_upload=web.upload_cap(
                       cl_config.features.spontaneous_file_upload.max_size_mb or 20))
web.add_routes(server, SETTINGS, readiness=RUNTIME.readiness, metrics=RUNTIME.metrics,
               window=RUNTIME.window, demo=SERVICES.demo, notice=wording.DEMO_NOTICE,
               sign_in=HISTORY)
PAGE_WORDS = PageWords()  # the guests' words, from the catalogs
room_page.mount(server, RUNTIME.rooms, SETTINGS, PAGE_WORDS, speech=RUNTIME.speech)  # phones
counter.mount(server, SERVICES.translator, SERVICES.limiter, SETTINGS, PAGE_WORDS,
              speech=RUNTIME.speech)
desk_page.mount(server, RUNTIME.desk, SETTINGS, PAGE_WORDS, speech=RUNTIME.speech)  # visitors
# Several replicas: the desk's queue and its conversations' talk shared through Redis.
RELAY = DeskRelay(RUNTIME.desk, RUNTIME.rooms, SETTINGS.redis_url) if SETTINGS.redis_url else None
RELAY_TASK: list[asyncio.Task[None]] = []  # the relay's listener, held for the process
api.mount(server, SERVICES.translator, SETTINGS, metrics=RUNTIME.metrics)  # LibreTranslate, DeepL
CHAT_WORDS = chat_words.mount(server, cl_config.root)
# Files of any kind, empty ones too: the app says why it refuses one, in the page's words.
edge.own_uploads(documents.upload_mime)

# --- sessions ---------------------------------------------------------------------------------

def _environ() -> dict[str, Any]:
    return getattr(cl.context.session, "environ", None) or {}


def _user_key() -> str:
    """Whose allowance a job draws from: the signed-in agent, else the client's address."""
    user = edge.session_get("user")
    return f"user:{user.identifier}" if user else web.address_key(_environ())


async def _save_agent(state: dict[str, Any]) -> None:
    """Keep the conversation for a resume: in the session (Chainlit saves it into the thread's
    metadata when the tab closes) and at once in the thread (a server restart loses nothing)."""
    edge.session_set(modes.AGENT_STATE, state)
    layer = edge.data_layer() if HISTORY else None
    if layer is None or not getattr(cl.context.session, "has_first_interaction", False):
        return
    try:
        await layer.update_thread(cl.context.session.thread_id, metadata={
            "chat_profile": modes.AGENT_PROFILE, modes.AGENT_STATE: state})
    except Exception:  # noqa: BLE001 - history is a convenience: never fail a turn over it
        logger.exception("could not save the conversation to the history database")


def _open(thread: ThreadDict | None = None) -> Session:
    """The tab's session, of its profile's mode (a resumed agent thread keeps its talk)."""
    profile = modes.profile_name(edge.session_get("chat_profile"))
    args: dict[str, Any] = {"session_id": cl.context.session.id, "user_key": _user_key(),
                            "page": CHAT_WORDS.page_text(chat_words.environ_language(_environ()))}
    session: Session
    if profile == modes.AGENT_PROFILE:
        conv = modes.agent_state_of(thread.get("metadata") if thread else None)
        session = AgentSession(SERVICES, Screen(), conversation=conv, save=_save_agent,
                               page_url=web.page_url(_environ()),
                               affinity=web.cookie(_environ(), SETTINGS.affinity_cookie), **args)
    elif profile == kiosk.KIOSK_PROFILE:
        session = KioskSession(SERVICES, Screen(), **args)
    else:
        session = TranslatorSession(SERVICES, Screen(), **args)
    RUNTIME.tabs[edge.tab_id()] = session
    RUNTIME.start()
    return session


def _session() -> Session:
    return RUNTIME.tabs.get(edge.tab_id()) or _open()


def _kept(thread: ThreadDict) -> Session:
    """The resumed tab's session: the one it has, if of the thread's mode (the same tab's socket
    again: the page reconnects at once to switch to the thread's profile, and a reply sent
    meanwhile goes on), else a new one."""
    kept = RUNTIME.tabs.get(edge.tab_id())
    profile = modes.profile_name(edge.session_get("chat_profile"))
    mode = {modes.AGENT_PROFILE: AgentSession, kiosk.KIOSK_PROFILE: KioskSession}.get(
        profile, TranslatorSession)
    if kept is not None and type(kept) is mode:
        return kept
    return _open(thread)


def _unkept() -> bool:
    """For the data layer: is this write skipped (a kiosk's session keeps nothing; a mode
    shows some things without keeping them: ``not_stored``)?"""
    if not storing():
        return True
    try:
        return cl.context.session.chat_profile == kiosk.KIOSK_PROFILE
    except ChainlitContextException:  # a write outside any session (an HTTP route)
        return False


# --- profiles, sign-in, history ---------------------------------------------------------------

@cl.set_chat_profiles
async def chat_profiles(user: cl.User | None = None,
                        language: str | None = None) -> list[cl.ChatProfile]:
    return profiles_shown(CHAT_WORDS.settings_text(language), signed_in=user is not None)


if AGENTS:  # registering Chainlit's auth callback makes sign-in compulsory: only with agents
    @cl.password_auth_callback
    async def sign_in(username: str, password: str) -> cl.User | None:
        if await auth.authenticate(SETTINGS.agents, username, password):
            return cl.User(identifier=username.strip(), metadata=auth.claims(AGENTS, username))
        return None

@cl.on_app_startup
async def app_startup() -> None:
    """The runtime's readings, the history's tables, the desk's relay and restored queue."""
    RUNTIME.start()
    if HISTORY:
        added = await history.ensure_schema(SETTINGS.history_url)
        if added:
            logger.info("history: added columns %s", ", ".join(added))
    if RELAY is not None:
        RELAY_TASK.append(asyncio.get_running_loop().create_task(RELAY.run()))
        await RELAY.ready()
    await RUNTIME.desk.restore()  # the database's open desk conversations (a restart)


@cl.on_app_shutdown
async def app_shutdown() -> None:
    """Stop the relay's listener and everything the runtime started; close its connections."""
    for task in RELAY_TASK:
        task.cancel()
    await RUNTIME.close()


if HISTORY:  # Chainlit lists and resumes threads per signed-in user: history needs sign-in
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

    @cl.data_layer
    def history_layer() -> SQLAlchemyDataLayer:
        cls = history.skip_writes_when(SQLAlchemyDataLayer, _unkept)
        cls = history.refuse_erased(history.unnamed_after(cls, (*BUTTONS, "audio")))
        layer = cls(conninfo=SETTINGS.history_url)
        history.adapt_sqlite(layer.engine)
        return layer

    @cl.on_chat_resume
    async def resume(thread: ThreadDict) -> None:
        first_naming()  # a resumed thread has its name
        session = _kept(thread)
        await session.resume(edge.session_get("chat_settings"))
        edge.once_shown(session.shown)


# --- events -----------------------------------------------------------------------------------

@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return starters_shown(CHAT_WORDS.settings_text(language))


async def start() -> None:
    # _session, not _open: Chainlit starts the chat after connection_successful's emits, so a
    # message sent at once may have opened the tab's session already (and runs in it).
    await _session().start()


# Not @cl.on_chat_start: its task flag disables the page's composer while the start runs (the
# pickers ask the model server what it serves), and Enter pressed then did nothing at all.
cl_config.code.on_chat_start = wrap_user_function(start)


@cl.on_settings_update
async def settings_update(values: dict[str, Any]) -> None:
    await _session().settings_changed(values)


async def message(msg: cl.Message) -> None:
    logs.bind_request_id()
    uploads = [Upload(path, el.name) for el in msg.elements or [] if (path := el.path)]
    session = _session()
    await session.message(msg.content, msg.command, uploads=uploads, shown=msg)
    if HISTORY:  # the thread named after its first real words (presenter.name_from)
        await name_from(session.title())


# Not @cl.on_message: its run step per message (socket events, database writes) drew only a dot.
cl_config.code.on_message = wrap_user_function(message)


async def button(action: cl.Action) -> None:
    session = _session()
    await session.button(action.name, action.payload, action.label, action.remove)
    if HISTORY:  # Chainlit named the thread after the action ("desk_take"): not a name
        await name_from(session.title())


for _name in BUTTONS:
    cl.action_callback(_name)(button)
# Stop (the session says what stopped, with Retry) and the mic (it hears each utterance).
own_controls(sio, _session, microphone=SETTINGS.speech)


@cl.on_window_message
async def window_message(data: Any) -> None:
    """The tab's own script (public/desk.js): the agent is typing."""
    session = RUNTIME.tabs.get(edge.tab_id())
    if session is not None:
        await session.window_message(data)


@cl.on_chat_end
async def end() -> None:
    """The tab's socket closed. Unless it is back within the grace, the tab is gone: drop its
    queued jobs, close its in-flight call (vLLM aborts it), and let go of what it kept (a tab
    that reconnects later is told its old buttons expired)."""
    tab, task = edge.tab_id(), cl.context.session.current_task

    def let_go() -> None:
        session = RUNTIME.tabs.pop(tab, None)
        if session is not None:
            session.end()
        if task is not None and not task.done():
            task.cancel()

    edge.unless_back(SETTINGS.reconnect_grace, let_go)


# What the app built at its start lives as long as the process: out of the collector's sight, a
# full collection skips Chainlit's, Babel's and langdetect's ~200,000 objects (0.1-0.2 s each).
gc.collect()
gc.freeze()
