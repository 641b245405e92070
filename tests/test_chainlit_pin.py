"""Chainlit is archived upstream (SECURITY.md): what hymt-chat relies on in it is pinned here, so
that any other version fails a test instead of breaking the app without a word.

The pins read chainlit 2.12.0 as installed (its source, its route table, its page's bundle) in
this process; the last tests run the real app (``chainlit run app.py``, stand-in model) and
check that only the routes the product uses answer.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import inspect
import re
import shutil
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from hymt_chat.service import history, http_guard, web
from tests.support.chainlit_app import ROOT
from tests.support.tabs import Tab, app

VERSION = "2.12.0"

# Chainlit's route table as 2.12.0 builds it (with FastAPI's docs): methods and path, in order.
# A new, removed, moved or changed route fails test_the_route_table_is_the_pinned_one: decide
# then whether the product uses it (http_guard.CHAINLIT_USED) or it stays refused.
ROUTES = """
GET HEAD /openapi.json
GET HEAD /docs
GET HEAD /docs/oauth2-redirect
GET HEAD /redoc
MOUNT /ws/socket.io
GET /public/{filename:path}
GET /assets/{filename:path}
GET /copilot/{filename:path}
GET /auth/config
POST /login
POST /logout
POST /auth/jwt
POST /auth/header
GET /auth/oauth/{provider_id}
GET /auth/oauth/{provider_id}/callback
POST /auth/oauth/azure-ad-hybrid/callback
GET /user
POST /set-session-cookie
GET /project/translations
GET /project/settings
PUT /feedback
DELETE /feedback
POST /project/threads
GET /project/thread/{thread_id}
GET /project/share/{thread_id}
GET /project/thread/{thread_id}/element/{element_id}
PUT /project/element
DELETE /project/element
PUT /project/thread
PUT /project/thread/share
DELETE /project/thread
POST /project/action
POST /mcp
DELETE /mcp
POST /project/file
GET /project/file/{file_id}
GET /favicon
GET /logo
GET /avatars/{avatar_id:str}
HEAD /
GET /health
GET /{full_path:path}
""".strip().splitlines()

# What Chainlit's page calls by name (its bundle's api client): the product's part of it is in
# CHAINLIT_USED; the rest is refused (no feedback, sharing, elements, MCP, JWT/header sign-in).
PAGE_CALLS = {
    ("DELETE", "/feedback"), ("DELETE", "/mcp"), ("DELETE", "/project/element"),
    ("DELETE", "/project/thread"), ("GET", "/user"), ("POST", "/auth/header"),
    ("POST", "/auth/jwt"), ("POST", "/login"), ("POST", "/logout"), ("POST", "/mcp"),
    ("POST", "/project/action"), ("POST", "/project/threads"), ("POST", "/set-session-cookie"),
    ("PUT", "/feedback"), ("PUT", "/project/element"), ("PUT", "/project/thread"),
    ("PUT", "/project/thread/share"),
}
REFUSED_CALLS = {("DELETE", "/feedback"), ("PUT", "/feedback"), ("POST", "/mcp"),
                 ("DELETE", "/mcp"), ("PUT", "/project/element"),
                 ("DELETE", "/project/element"), ("PUT", "/project/thread/share"),
                 ("POST", "/auth/jwt"), ("POST", "/auth/header")}


@pytest.fixture(scope="module")
def cl_server():
    """Chainlit's server module, loaded here as `chainlit run` loads it (config from the
    checkout); the `.files` folder its import makes in the checkout is left as it was."""
    made = not (ROOT / ".files").exists()
    server = importlib.import_module("chainlit.server")
    yield server
    if made:
        shutil.rmtree(ROOT / ".files", ignore_errors=True)


def _table(server) -> list[str]:
    rows = []
    for entry in server.app.router.routes:
        for route in web._leaves(entry):
            rows.append(" ".join([*sorted(getattr(route, "methods", None) or ["MOUNT"]),
                                  route.path]))
    return rows


# --- the pin ------------------------------------------------------------------------------------


def test_the_installed_chainlit_is_the_pinned_version():
    assert importlib.metadata.version("chainlit") == VERSION
    import chainlit.version

    assert chainlit.version.__version__ == VERSION


def test_the_route_table_is_the_pinned_one(cl_server):
    assert _table(cl_server) == ROUTES


def test_every_route_the_product_uses_is_in_the_table(cl_server):
    table = {(row.split()[0], row.split()[-1]) for row in _table(cl_server)}
    table |= {("WEBSOCKET", "/ws/socket.io")}
    assert sorted(http_guard.CHAINLIT_USED - table) == []
    # the page route is last: the app's routes go in front of it (web.to_front)
    assert _table(cl_server)[-1] == "GET " + http_guard.CHAINLIT_PAGE


def test_uploads_of_any_kind_reach_the_app(cl_server):
    """chainlit_edge.own_uploads: the page's dropzone turns the config's ``accept`` list into
    react-dropzone's {type: []} (empty: no filter, no toast of MIME types); the server checks
    the list by that one function's name, with the ask's spec (None for the composer's files);
    an upload is kept through the session's ``persist_file``, which refuses b"" as no content;
    its kept type decides its element (a PDF viewer for application/pdf, else a file)."""
    from chainlit.element import Element
    from chainlit.session import WebsocketSession

    bundle = "".join(p.read_text("utf-8") for p in (
        Path(importlib.import_module("chainlit").__file__).parent
        / "frontend" / "dist" / "assets").glob("index-*.js"))
    assert re.search(r"accept\)\|\|\{\"application/\*\":\[\]", bundle)  # [] is truthy: used
    assert re.search(r"Array\.isArray\((\w)\)\?\1\.forEach\(", bundle)
    assert "validate_file_mime_type(file, spec)" in inspect.getsource(
        cl_server.validate_file_upload)
    assert "persist_file(\n            name=file.filename, content=content, mime=" in \
        inspect.getsource(cl_server.upload_file)
    assert list(inspect.signature(WebsocketSession.persist_file).parameters) == [
        "self", "name", "mime", "path", "content"]
    assert "if not path and not content:" in inspect.getsource(WebsocketSession.persist_file)
    assert Element.infer_type_from_mime("application/pdf") == "pdf"
    assert Element.infer_type_from_mime("application/octet-stream") == "file"


def test_the_page_calls_what_the_guard_expects():
    """The page's calls by name, read from its bundle: each is used or refused on purpose."""
    bundle = "".join(p.read_text("utf-8") for p in (
        Path(importlib.import_module("chainlit").__file__).parent
        / "frontend" / "dist" / "assets").glob("index-*.js"))
    calls = {(m.upper(), p) for m, p in re.findall(r'this\.(get|post|put|delete|patch)\("(/[^"]*)"',
                                                    bundle)}
    calls |= set(re.findall(r'fetch\("([A-Z]+)","(/[^"]*)"', bundle))
    assert calls == PAGE_CALLS
    for method, path in PAGE_CALLS - REFUSED_CALLS:
        assert (method, path) in http_guard.CHAINLIT_USED
    assert not REFUSED_CALLS & http_guard.CHAINLIT_USED
    # the file links and uploads name their session in the query (web.SessionBinding)
    assert "/project/file?session_id=${" in bundle and "?session_id=${" in bundle
    assert "sessionId:e,action:t" in bundle  # a button's call names it in its body


def test_the_internals_app_py_relies_on(cl_server):
    from chainlit.auth import get_token_from_cookies
    from chainlit.auth.jwt import decode_jwt
    from chainlit.config import config
    from chainlit.context import ChainlitContextException  # noqa: F401 - it must import
    from chainlit.data import get_data_layer  # noqa: F401
    from chainlit.emitter import BaseChainlitEmitter, ChainlitEmitter
    from chainlit.utils import wrap_user_function
    from starlette.middleware.cors import CORSMiddleware

    # nonblocking.drop_blocking_sleep: a global `time` whose sleep the constructors call
    for name, cls in (("message", "Message"), ("step", "Step")):
        module = importlib.import_module(f"chainlit.{name}")  # chainlit.step is a function too
        assert module.time is time
        assert "time.sleep(" in inspect.getsource(getattr(module, cls).__init__)
    # the socket's frame cap, the sign-in's lifetime, the upload count
    assert isinstance(cl_server.sio.eio.max_http_buffer_size, int)
    assert isinstance(config.project.user_session_timeout, int)
    assert config.features.spontaneous_file_upload.max_files == 20
    # the message handler set without its run step
    assert "on_message" in type(config.code).model_fields
    assert list(inspect.signature(wrap_user_function).parameters)[:1] == ["user_function"]
    # the resume override: the emitter's method taking the thread, whose result is awaited
    for cls in (BaseChainlitEmitter, ChainlitEmitter):
        assert list(inspect.signature(cls.resume_thread).parameters) == ["self", "thread_dict"]
    assert inspect.iscoroutinefunction(BaseChainlitEmitter.resume_thread)
    assert 'return self.emit("resume_thread", thread_dict)' in inspect.getsource(
        ChainlitEmitter.resume_thread)
    # tokens: from cookies (access_token, chunked), decoded to a User
    assert get_token_from_cookies({"access_token": "t"}) == "t"
    assert list(inspect.signature(decode_jwt).parameters) == ["token"]
    # Chainlit's CORS middleware, whose origins web.install_guards narrows
    cors = [m for m in cl_server.app.user_middleware if m.cls is CORSMiddleware]
    assert len(cors) == 1 and "allow_origins" in cors[0].kwargs
    # Stop: app.py's handler of the socket's "stop" in place of Chainlit's, whose own words
    # ("Task manually stopped.") it replaces; the session's task to cancel
    import chainlit.socket
    assert 'Message(content="Task manually stopped.").send()' in inspect.getsource(
        chainlit.socket.stop)
    assert "session.current_task.cancel()" in inspect.getsource(chainlit.socket.stop)
    # a profile without uploads: its config_overrides, merged over the config for the page
    from chainlit.config import ChainlitConfigOverrides, FeaturesSettings
    from chainlit.types import ChatProfile
    assert "config_overrides" in inspect.signature(ChatProfile).parameters
    off = config.with_overrides(ChainlitConfigOverrides(features=FeaturesSettings(
        spontaneous_file_upload={"enabled": False})))
    assert off.features.spontaneous_file_upload.enabled is False
    assert off.features.spontaneous_file_upload.max_files == 20  # the rest kept
    # a thread named after its first interaction: an action's name (app.button renames it)
    from chainlit.emitter import ChainlitEmitter as Emitter
    assert "init_thread(action.name)" in inspect.getsource(cl_server.call_action)
    assert '"first_interaction"' in inspect.getsource(Emitter.init_thread)


def test_the_internals_the_guard_and_history_rely_on(cl_server):
    import chainlit.config
    import chainlit.socket
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
    from chainlit.session import BaseSession
    from chainlit.types import CallActionRequest

    # web.own_files: the folder is a module global read when used, by sessions and at the stop
    assert isinstance(chainlit.config.FILES_DIRECTORY, Path)
    assert isinstance(cl_server.FILES_DIRECTORY, Path)
    assert "from chainlit.config import FILES_DIRECTORY" in inspect.getsource(
        BaseSession.files_dir.fget)
    assert "shutil.rmtree(FILES_DIRECTORY)" in inspect.getsource(cl_server.lifespan)
    # web.SessionBinding: where a session id travels
    connect = inspect.getsource(chainlit.socket.connect)
    assert 'auth["sessionId"]' in connect and "restore_existing_session(" in connect
    assert "session_id: str" in inspect.getsource(cl_server.upload_file)
    assert "session_id: str" in inspect.getsource(cl_server.get_file)
    assert "FileResponse(file[\"path\"], media_type=file[\"type\"])" in inspect.getsource(
        cl_server.get_file)  # no Content-Disposition of its own: web's guard adds it
    assert "sessionId" in CallActionRequest.model_fields
    assert cl_server.SOCKET_IO_PATH == "/ws/socket.io"
    # web_guard: the sign-in cookie's name
    assert inspect.getsource(importlib.import_module("chainlit.auth.cookie")).count(
        '"CHAINLIT_AUTH_COOKIE_NAME", "access_token"') == 1
    # history: the data layer's writes, its engine, its constructor
    for name in history.WRITES:
        assert inspect.iscoroutinefunction(getattr(SQLAlchemyDataLayer, name)), name
    assert "conninfo" in inspect.signature(SQLAlchemyDataLayer.__init__).parameters
    assert "self.engine" in inspect.getsource(SQLAlchemyDataLayer.__init__)
    # service/history_records + cache_files (erasure): a thread's metadata keeps its session's
    # id (the user session, persisted when the tab goes), whose uploads are FILES_DIRECTORY/id
    assert 'user_session["id"] = context.session.id' in inspect.getsource(
        importlib.import_module("chainlit.user_session"))
    assert "persist_user_session(session.thread_id, session.to_persistable())" in \
        inspect.getsource(chainlit.socket)
    assert "FILES_DIRECTORY / self.id" in inspect.getsource(BaseSession.files_dir.fget)


def test_the_config_keeps_the_dangerous_features_off(cl_server):
    """MCP (command injection, SSRF through user servers), unsafe HTML, sharing: off, in the
    file and as Chainlit reads it; the socket is a websocket only (web.SessionBinding reads
    its connect frames)."""
    raw = tomllib.loads((ROOT / ".chainlit" / "config.toml").read_text("utf-8"))
    from chainlit.config import config

    assert raw["features"]["mcp"]["enabled"] is False
    assert raw["features"]["mcp"]["user_servers"]["enabled"] is False
    assert raw["features"]["unsafe_allow_html"] is False
    assert raw["features"]["allow_thread_sharing"] is False
    assert raw["project"]["transports"] == ["websocket"]
    assert config.features.mcp.enabled is False
    assert config.features.mcp.user_servers.enabled is False
    assert config.features.unsafe_allow_html is False
    assert config.features.allow_thread_sharing is False
    assert config.code.on_shared_thread_view is None
    assert config.project.transports == ["websocket"]


# --- the surface, on the real app ------------------------------------------------------------


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with app(tmp_path_factory.mktemp("surface")) as (url, _stub):
        yield url


REFUSED = [
    ("PUT", "/feedback"), ("DELETE", "/feedback"), ("GET", "/feedback"),
    ("PUT", "/project/thread/share"), ("GET", "/project/share/0e7f7a4c-7b1e-4a54-9a52-1f0e6c0f9d3b"),
    ("PUT", "/project/element"), ("DELETE", "/project/element"),
    ("POST", "/mcp"), ("DELETE", "/mcp"), ("GET", "/mcp"),
    ("GET", "/openapi.json"), ("GET", "/docs"), ("POST", "/auth/jwt"), ("POST", "/auth/header"),
    ("GET", "/copilot/index.js"), ("GET", "/share/abc"), ("GET", "/ws/socket.io/"),
]


def test_routes_the_product_does_not_use_answer_404(running):
    answers = {(m, p): httpx.request(m, running + p, json={}, timeout=30).status_code
               for m, p in REFUSED}
    assert answers == {key: 404 for key in REFUSED}


def test_the_routes_the_product_uses_still_answer(running):
    get = {p: httpx.get(running + p, timeout=30) for p in (
        "/", "/thread/abc", "/login", "/project/settings", "/auth/config", "/public/banner.js",
        "/favicon", "/logo", "/project/translations", "/health", "/hymt/status")}
    assert {p: r.status_code for p, r in get.items()} == {p: 200 for p in get}
    assert "<script nonce=" in get["/"].text  # the page is still the hardened page

    async def connects() -> bool:
        async with Tab(running) as tab:
            await tab.send("Bonjour, ma commande est en retard.")
            return bool(await tab.wait("EN:"))

    assert asyncio.run(connects())
