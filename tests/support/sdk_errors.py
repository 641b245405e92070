"""The model client's HTTP errors as the ``openai`` package raises them."""

from __future__ import annotations

import httpx2
from openai import APIStatusError


def status_error(status: int, headers: dict[str, str] | None = None) -> APIStatusError:
    """The SDK's error for an answer of HTTP *status* from the model server."""
    request = httpx2.Request("POST", "http://model.test/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, request=request, text="refused")
    return APIStatusError("refused", response=response, body=None)
