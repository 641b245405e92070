"""An OpenAI-compatible stand-in that answers at once (Starlette on uvicorn, its own process).

For ``app_ceiling.py``: it must be far faster than the app so that the app is what is measured.
The benchmark's sentence is answered in English, as a model would, keeping its number (so a
client can tell its own answer, and the app's checks pass it without a repair call); any other
text comes back as ``EN:`` + itself. ``python benchmarks/_instant_model.py PORT``.
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from tests.support.stub_model import echo_source


async def health(_: Request) -> JSONResponse:
    return JSONResponse({})


async def models(_: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [
        {"id": "stub", "object": "model", "root": "stub-model", "owned_by": "t"}]})


FRENCH = "Bonjour, je voudrais réserver une table pour deux personnes ce soir, merci "
ENGLISH = "Hello, I would like to book a table for two people tonight, thank you "


def answer(prompt: str) -> str:
    source = echo_source(prompt)
    if source.startswith(FRENCH):
        return ENGLISH + source.removeprefix(FRENCH)
    return "EN:" + source


async def chat(request: Request) -> JSONResponse:
    body = await request.json()
    content = answer(body["messages"][-1]["content"])
    return JSONResponse({
        "id": "stub-1", "object": "chat.completion", "created": 0, "model": "stub",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


app = Starlette(routes=[Route("/health", health), Route("/v1/models", models),
                        Route("/v1/chat/completions", chat, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                backlog=4096, access_log=False)
