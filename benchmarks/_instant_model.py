"""An OpenAI-compatible stand-in that answers at once (Starlette on uvicorn, its own process).

For ``app_ceiling.py``: it must be far faster than the app so that the app is what is measured.
The answer is ``EN:`` + the text to translate (``tests.support.stub_model.echo_source``), so a
client can tell its own answer. ``python benchmarks/_instant_model.py PORT``.
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


async def chat(request: Request) -> JSONResponse:
    body = await request.json()
    content = "EN:" + echo_source(body["messages"][-1]["content"])
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
