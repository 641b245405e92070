"""An anonymous session belongs to the browser that opened it: another client that names its id
(read from a file link, say) gets a new session, never the other one's messages.

The real app on the stand-in model; socket.io tabs like a browser's (with the cookie the page
gives) and like a script's (none). Chainlit restores a session for any client naming its id
(chainlit/socket.py, restore_existing_session): the app keys the id by the browser's cookie.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.support.browser_client import browser_cookie
from tests.support.tabs import Tab, app

FIRST = "Bonjour, ma commande numéro 4711 est en retard."
SECOND = "Merci, le colis 8812 est arrivé abîmé."


@pytest.mark.parametrize("intruder", ["another browser", "a script without a cookie"])
def test_a_client_naming_another_session_gets_a_new_one(tmp_path, intruder):
    async def scenario(url: str) -> tuple[list[str], list[str], list[str]]:
        cookie = browser_cookie(url)
        async with Tab(url, headers={"Cookie": cookie}) as owner:
            await owner.send(FIRST)
            await owner.wait("4711")
            other = Tab(url, headers={"Cookie": browser_cookie(url)}
                        if intruder == "another browser" else {})
            other.session = owner.session  # the id, as a file link carries it
            async with other:
                # a chat of its own: started, with its settings (a restored one is not)
                await other._first(lambda: next((d for e, d in other.events
                                                 if e == "chat_settings"), None),
                                   60, "no chat_settings")
                await owner.send(SECOND)
                await owner.wait("8812")  # the owner's answer still comes to the owner
                await other.send("Hello from the other client.")
                await other.wait("already in English", "EN:")
                return owner.said("EN:"), other.said("4711"), other.said("8812")

    with app(tmp_path) as (url, _stub):
        owners, leaked_first, leaked_second = asyncio.run(scenario(url))
    assert any("4711" in s for s in owners) and any("8812" in s for s in owners)
    assert leaked_first == [] and leaked_second == []
