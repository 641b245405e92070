"""A request's fields, from JSON or a form body (and the query string), with a size cap.

Both dialects take JSON and ``application/x-www-form-urlencoded`` alike (LibreTranslate's
clients mostly send forms; DeepL's send JSON, and a form repeats ``text=`` per text). The body
is refused by its Content-Length before it is read, and a body without one is read only up to
the cap: a 1 MB paste costs nothing but the refusal.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import parse_qs

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from hymt_chat.errors import BodyTooLargeError, InputError

__all__ = ["Fields", "NotAnObjectError", "read_fields"]


class NotAnObjectError(InputError):
    """A JSON body that is not an object (LibreTranslate: "Invalid JSON format", app.py's
    ``get_json_dict``)."""


class Fields:
    """Field name -> list of values (a JSON list is a list of values too)."""

    def __init__(self, values: dict[str, list[Any]], lists: frozenset[str] = frozenset()) -> None:
        self._values = values
        self._lists = lists

    def was_list(self, name: str) -> bool:
        """Sent as a JSON list (even of one value), or repeated in a form."""
        return name in self._lists or len(self._values.get(name, [])) > 1

    def names(self) -> list[str]:
        return list(self._values)

    def json_list(self, name: str) -> bool:
        """Sent as a JSON list (LibreTranslate's batch; a repeated form field is not one)."""
        return name in self._lists

    def get(self, name: str) -> Any:
        values = self._values.get(name)
        return values[0] if values else None

    def getlist(self, name: str) -> list[Any]:
        return list(self._values.get(name, []))

    def file(self, name: str) -> UploadFile | None:
        value = self.get(name)
        return value if isinstance(value, UploadFile) else None

    def text(self, name: str, default: str | None = None) -> str | None:
        """A field that must be one string (a number is taken as its text)."""
        value = self.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise InputError(f"Invalid request: '{name}' must be a string.")
        return str(value)

    def integer(self, name: str, default: int = 0) -> int:
        value = self.get(name)
        if value is None or value == "":
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            raise InputError(f"Invalid request: '{name}' must be an integer.") from None


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(int(declared), limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLargeError(len(body), limit)
    return bytes(body)


async def read_fields(request: Request, limit: int) -> Fields:
    values: dict[str, list[Any]] = {k: request.query_params.getlist(k)
                                    for k in request.query_params}
    body = await read_body(request, limit)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if body.strip() and (kind == "application/json" or kind.endswith("+json")):
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(f"Invalid request: the body is not valid JSON ({err}).") from None
        if not isinstance(data, dict):
            raise NotAnObjectError("Invalid JSON format: the body must be a JSON object "
                                   "of the request's fields.")
        for name, value in data.items():
            values[name] = value if isinstance(value, list) else [value]
        lists = frozenset(name for name, value in data.items() if isinstance(value, list))
        return Fields(values, lists)
    elif kind == "multipart/form-data":
        async def stream() -> AsyncGenerator[bytes, None]:
            yield body

        try:
            form = await MultiPartParser(request.headers, stream(), max_files=1,
                                         max_part_size=limit).parse()
        except MultiPartException as err:
            raise InputError(f"Invalid request: {err.message}.") from None
        for name in form:
            values[name] = list(form.getlist(name))
    elif body.strip():
        try:
            parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=10_000)
        except (UnicodeDecodeError, ValueError) as err:
            raise InputError(f"Invalid request: the form body cannot be read ({err}).") from None
        values.update(parsed)
    return Fields(values)
