"""The last routes of a dialect: an unknown path is a 404 and a known path asked with another
method a 405 (with ``Allow``), both in the dialect's error shape — never the chat page.

Chainlit's server ends with a catch-all page route (``GET /{path:path}``) that answers any GET
with the chat page's HTML: without these, ``GET /deepl/v3/glossaries`` would be a 200 of HTML,
which deepl-python takes for an empty list and deepl-node crashes on. Starlette takes the
first route that matches a path and method fully, and only falls back to a 405 when none does;
the catch-all below matches every method, so it works out the 405 itself from the dialect's
own routes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

__all__ = ["ANY_METHOD", "add_fallback"]

ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

Answer = Callable[[int, str, dict[str, str]], Response]
"""(status, message, headers) -> the dialect's error response."""


def allowed_methods(routes: Iterable[BaseRoute], request: Request) -> list[str]:
    """The methods the dialect's routes take at this request's path (empty: no such path)."""
    methods: set[str] = set()
    for route in routes:
        if isinstance(route, Route) and route.methods:
            match, _ = route.matches({**request.scope, "method": "\x00"})
            if match is not Match.NONE:  # PARTIAL: the path is right, the method is not
                methods |= route.methods
    return sorted(methods)


def add_fallback(router: APIRouter, roots: Iterable[str], answer: Answer,
                 unknown: Callable[[str], str | None] | None = None) -> None:
    """Answer everything under each of *roots* (``/deepl``, ``/v2``) that the routes already
    in *router* do not: 405 where the path is known, else 404. *unknown* may word the 404
    for a path (a DeepL endpoint this server does not offer says so)."""
    ours = list(router.routes)

    async def fallback(request: Request) -> Response:
        methods = allowed_methods(ours, request)
        if methods:
            return answer(405, f"Method {request.method} is not allowed on "
                          f"{request.url.path}; use {', '.join(methods)}.",
                          {"Allow": ", ".join(methods)})
        message = unknown(request.url.path) if unknown else None
        return answer(404, message or f"Not found: {request.url.path}.", {})

    for root in roots:
        for path in (root, root + "/{rest:path}"):
            router.add_api_route(path, fallback, methods=ANY_METHOD, include_in_schema=False)
