"""A desk no agent can sign in to (no ``HYMT_AGENTS``, the default) is closed: ``/desk`` says so
in the visitor's language, with no form to write into, and a start is refused with the key the
page says ("desk_closed"), not queued and then called busy.

Against the real app (``tests/support/tabs.py``, whose default has no agents)."""

from __future__ import annotations

import httpx

from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import GUEST as ENGLISH
from tests.support.tabs import app


def test_the_desk_without_agents_says_it_is_closed(tmp_path):
    with app(tmp_path) as (url, _):
        page = httpx.get(f"{url}/desk", headers={"Accept-Language": "es-ES,es"}, timeout=30)
        assert page.status_code == 503 and 'lang="es"' in page.text
        assert catalog("es").group("guest")["desk_closed"] in page.text and catalog("es").group("guest")["desk_title"] in page.text
        assert "<form" not in page.text and "<textarea" not in page.text
        english = httpx.get(f"{url}/desk", timeout=30)
        assert english.status_code == 503 and ENGLISH["desk_closed"] in english.text
        start = httpx.post(f"{url}/desk/start", timeout=30, json={
            "language": "es", "text": "Hola, mi pedido no ha llegado.", "guest": "f" * 32})
        assert start.status_code == 503 and start.json()["key"] == "desk_closed"
        assert start.json()["text"] == ENGLISH["desk_closed"]
