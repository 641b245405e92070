"""The one function the app calls: :func:`mount` the two dialects on a FastAPI server."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI

from hymt_chat.api.access import OFF_MESSAGE, Access
from hymt_chat.api.deepl import deepl_router
from hymt_chat.api.keys import KeyStore, open_store, store_location
from hymt_chat.api.libretranslate import libretranslate_router
from hymt_chat.api.service import ApiService
from hymt_chat.api.work import TranslatorLike
from hymt_chat.errors import HymtError
from hymt_chat.service.metrics import Metrics
from hymt_chat.settings import Settings

__all__ = ["mount"]

_log = logging.getLogger("hymt_chat.api")


def mount(server: FastAPI, translator: TranslatorLike, settings: Settings, *,
          metrics: Metrics | None = None, store: KeyStore | None = None) -> ApiService | None:
    """Add ``/libretranslate/…`` and DeepL's ``/v2/…`` ``/v3/…`` (at the root and under ``/deepl``)
    to *server*, ahead of every route it has.

    Chainlit's server ends with a catch-all page route that would answer our paths first;
    the new routes are therefore moved to the front, in their own order. Works the same on a
    plain FastAPI app (tests). Logs one line saying whether the API is on and how. A key store
    (file or database, :func:`store_location`) that cannot be opened leaves the API unmounted
    (logged), never the chat page down.
    """
    if store is None:
        try:
            store = open_store(store_location(settings))
        except HymtError as err:
            _log.error("API off: %s", err)
            return None
    access = Access(store, open_local=settings.api_open_local,
                    local_limit=settings.rate_limit, local_chars=settings.rate_limit_chars,
                    limit_storage=settings.redis_url, calls=settings.rate_limit_calls)
    svc = ApiService(translator, settings, access, metrics)
    routes = server.router.routes
    before = len(routes)
    server.include_router(libretranslate_router(svc))
    server.include_router(deepl_router(svc))
    ours = routes[before:]
    del routes[before:]
    routes[0:0] = ours
    line = access.status_line()
    (_log.warning if line == OFF_MESSAGE else _log.info)("%s", line)  # the keys counted once
    if store.path is None and (behind := _left_behind(settings.api_keys_file)):
        _log.warning("%s API key(s) in %s are not used: the keys live in %s now. Copy them "
                     "there with `hymt-chat api-key import %s`.", behind,
                     settings.api_keys_file, store.location, settings.api_keys_file)
    return svc


def _left_behind(path: Path) -> int:
    """Active keys in the SQLite file of before a PostgreSQL HYMT_DATABASE_URL (0: none)."""
    if not path.is_file():
        return 0
    try:
        old = open_store(path)
    except HymtError:
        return 0
    try:
        return old.active_count()
    except HymtError:
        return 0
    finally:
        old.close()
