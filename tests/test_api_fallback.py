"""An API router's last route (hymt_chat/api/fallback.py) on a plain FastAPI app whose first
route is a catch-all page, as Chainlit's is: under the root, 405 with ``Allow`` for a known
path's other method, 200 and ``Allow`` for its OPTIONS, 404 for the rest, each in the dialect's
body; the page keeps every other path. Starlette's own answers are the reference: its router
gives 405 with ``Allow`` when a path matches and its method does not (starlette/routing.py,
``Router.app``: a partial match), and 404 when nothing matches."""

from __future__ import annotations

import httpx
from fastapi import APIRouter, FastAPI
from starlette.responses import JSONResponse, Response

from hymt_chat.api.fallback import add_fallback


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/{path:path}")
    async def page(path: str) -> dict[str, str]:  # Chainlit's catch-all, registered first
        return {"page": path}

    router = APIRouter()

    @router.post("/api/run")
    async def run() -> dict[str, bool]:
        return {"ran": True}

    @router.get("/api/items/{item}")
    async def item(item: str) -> dict[str, str]:
        return {"item": item}

    def error(status: int, sentence: str) -> Response:
        return JSONResponse({"oops": sentence}, status_code=status)

    add_fallback(router, "/api", error)
    before = len(app.router.routes)
    app.include_router(router)
    ours = app.router.routes[before:]
    del app.router.routes[before:]
    app.router.routes[0:0] = ours  # in front of the page, as routes.mount() does
    return app


async def test_the_fallback_answers_every_path_under_its_root_and_nothing_else() -> None:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        assert (await http.post("/api/run")).json() == {"ran": True}
        wrong = await http.get("/api/run")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
        assert set(wrong.json()) == {"oops"}
        options = await http.options("/api/items/7")
        assert options.status_code == 200 and options.headers["allow"] == "GET"
        assert (await http.delete("/api/items/7")).headers["allow"] == "GET"
        for path in ("/api", "/api/", "/api/nothing", "/api/run/more", "/apirun"):
            missing = await http.get(path)
            assert missing.status_code == 404 and set(missing.json()) == {"oops"}, path
        assert (await http.get("/elsewhere")).json() == {"page": "elsewhere"}
