"""The OpenAI-compatible client of the model server, and the mapping of its failures to ours.

Calls to the model (completions, and the model list) go out on the official ``openai``
package: one ``AsyncOpenAI`` per endpoint and event loop, on the SDK's aiohttp transport
(``DefaultAioHttpClient``), with no retries of its own (the policy retries). Requests are the
SDK's documented ``post``/``get`` with the body as vLLM takes it (its sampling fields beside
OpenAI's), answered as the raw response: the SDK's request and response models cost a
millisecond of CPU a call, as much as the rest of a message's path in the app
(``benchmarks/app_ceiling.py``). The health probe alone takes httpx, the client
``sidecar.probe`` shares with the CLI.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import threading
import time
import weakref
from typing import Any

import aiohttp
import httpx
import httpx2
from openai import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AsyncOpenAI,
    DefaultAioHttpClient,
    omit,
)

from hymt_chat.engine.families import Sampling, family_in_force, note_served_model
from hymt_chat.engine.pacing import DecodeRate, call_timeout
from hymt_chat.engine.prompts import chat_messages
from hymt_chat.errors import (
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    status_words,
)
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, forget_state, resolve_endpoint
from hymt_chat.sidecar.probe import HealthCheck
from hymt_chat.text.answers import strip_wrapping

_log = logging.getLogger(__name__)
# The headers the SDK adds to every request about itself (X-Stainless-*), left out.
_SDK_HEADERS = ("X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-OS",
                "X-Stainless-Arch", "X-Stainless-Runtime", "X-Stainless-Runtime-Version",
                "X-Stainless-Async")
_LIST_TIMEOUT = 120.0  # seconds for /v1/models (a completion's timeout is sized per call)
_KEEPALIVE = 4.0  # seconds an idle connection is kept: under uvicorn's (vLLM's) 5 s
# A connection per call in flight: the policy's window is the limit, and this is far above any
# window (the SDK's default, 100, would queue the calls of a large card's window in the pool).
_LIMITS = httpx2.Limits(max_connections=4096, max_keepalive_connections=4096,
                        keepalive_expiry=_KEEPALIVE)


def _retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date), if any."""
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # a header we cannot read: back off as if there were none
    return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def map_error(err: Exception, timeout: float, url: str | None = None) -> Exception:
    """Turn a transport or HTTP exception into one of ours, with a sentence a user can read; a failure to
    connect names the server (``detail``) so that a log or the CLI says where it looked."""
    if _timed_out(err):
        shown = f"{timeout:.0f}" if timeout >= 10 else f"{timeout:g}"
        return ModelTimeoutError(f"The model did not answer within {shown} s.")
    if isinstance(err, APIStatusError):
        return _status_error(err.status_code, err.response.headers)
    if isinstance(err, APIConnectionError):
        reason = _connect_reason(err)
        where = f"{url}: {reason}" if url else reason
        down = ModelUnavailableError(
            f"The translation model is not reachable (starting or down; {where}).")
        down.detail = where  # type: ignore[attr-defined]
        down.public = (  # type: ignore[attr-defined]  # the address is nobody else's business
            f"The translation model is not reachable (starting or down; {reason}).")
        return down
    if isinstance(err, (ValueError, KeyError, TypeError)):
        return ModelError("The model server sent an answer that is not valid JSON.")
    return err


def _timed_out(err: Exception) -> bool:
    """Whether *err* is a timeout. The SDK's aiohttp transport reports every aiohttp connection
    error as a connect timeout, a refused connection or a server gone mid-answer too: the
    aiohttp error under it tells which it was."""
    if not isinstance(err, APITimeoutError):
        return isinstance(err, TimeoutError)
    under = next((e for e in _causes(err) if isinstance(e, aiohttp.ClientError)), None)
    return under is None or isinstance(under, aiohttp.ServerTimeoutError)


def _causes(err: BaseException) -> list[BaseException]:
    """*err* and the errors under it, at most 8 deep: the SDK's <- httpx2's <- aiohttp's <-
    OSError."""
    chain: list[BaseException] = []
    link: BaseException | None = err
    while link is not None and len(chain) < 8:
        chain.append(link)
        link = link.__cause__ or link.__context__
    return chain


def _status_error(status: int, headers: Any) -> Exception:
    if status in (503, 429):
        busy = ModelBusyError(f"The translation model is busy (HTTP {status}).")
        busy.retry_after = _retry_after(headers)  # type: ignore[attr-defined]
        return busy
    if status in (502, 504):  # a gateway (the router, an ingress) lost its upstream
        gone = ModelUnavailableError(
            f"The translation model is not reachable (HTTP {status} from a gateway).")
        gone.detail = f"HTTP {status}"  # type: ignore[attr-defined]
        return gone
    known = status_words(status)
    if known is not None:
        did, setting = known
        return ModelError(f"The model server {did} (check HYMT_{setting}).")
    return ModelError(f"The model server failed (HTTP {status}).")


def _connect_reason(err: Exception) -> str:
    """"connection refused", "name not resolved", … from the errors under the client's."""
    chain = _causes(err)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    cause = " ".join(str(e) for e in chain[1:]).lower()
    for needle, reason in (("refused", "connection refused"), ("name or service", "unknown host"),
                           ("nodename", "unknown host"), ("timed out", "connect timed out"),
                           ("unreachable", "network unreachable")):
        if needle in cause:
            return reason
    return "no connection"


def _contents(response: object) -> list[str]:
    """The answers of a chat completion's JSON; ModelError when it is not shaped like one."""
    try:
        contents = [choice["message"]["content"]
                    for choice in response["choices"]]  # type: ignore[index]
    except (KeyError, TypeError, IndexError) as err:
        raise ModelError("The model server sent an answer that is not a chat completion.") from err
    if not contents or any(c is None for c in contents):
        raise ModelError("The model server sent an empty answer.")
    if not all(isinstance(c, str) for c in contents):
        raise ModelError("The model server sent an answer that is not a chat completion.")
    return contents


class ModelClient:
    """Chat completions against one endpoint; non-streaming, no retries of its own (the policy retries)."""

    def __init__(self, settings: Settings, endpoint: Endpoint | None = None) -> None:
        self.settings = settings
        self.endpoint = endpoint or resolve_endpoint(settings)
        self.decode_rate = DecodeRate(settings.decode_rate)
        # Cleared (and logged once) when the server refuses the field: a server that is not
        # vLLM, or one that validates extra fields.
        self.sends_priority = settings.engine_priority
        self._model: str | None = self.endpoint.model
        self._model_lock = asyncio.Lock()
        self._sdk: AsyncOpenAI | None = None  # made in the loop that first calls
        self._sdk_loop: asyncio.AbstractEventLoop | None = None
        self._base = ""  # the SDK's base URL as text, slash-ended: paths are joined to it

    def openai(self) -> AsyncOpenAI:
        """The endpoint's ``AsyncOpenAI`` in the running loop: one, shared by every call (a new
        one when the loop changed: tests). Its aiohttp pool lives in that loop."""
        sdk, loop = self._sdk, asyncio.get_running_loop()
        if sdk is None or self._sdk_loop is not loop or sdk.is_closed():
            if sdk is not None and self._sdk_loop is not None:
                _close_in(self._sdk_loop, sdk)
            key = self.endpoint.api_key
            # The SDK's own headers (its version, the OS, the runtime) tell a model server
            # nothing; a server without a key gets no Authorization header at all.
            quiet: dict[str, Any] = {name: omit for name in _SDK_HEADERS}
            if not key:
                quiet["Authorization"] = omit
            # No timeout of the SDK's own: :meth:`_post` bounds each whole call with one timer,
            # where the SDK's would add aiohttp's connect and read timers and a header to it.
            sdk = self._sdk = AsyncOpenAI(
                base_url=self.endpoint.base_url, api_key=key or "", max_retries=0, timeout=None,
                default_headers=quiet,
                http_client=DefaultAioHttpClient(limits=_LIMITS, timeout=None))
            self._sdk_loop = loop
            self._base = str(sdk.base_url)
            weakref.finalize(self, _close_in, loop, sdk)  # a client dropped unclosed
        return sdk

    async def _post(self, path: str, body: dict[str, Any] | None, timeout: float) -> object:
        """POST *body* as JSON (GET when None); the parsed JSON answer. The SDK's errors come
        out as they are (:func:`map_error` reads them); *timeout* bounds the whole call (a
        TimeoutError past it).

        The URL goes to the SDK whole: a path relative to its base URL is parsed and joined
        again on every call."""
        sdk = self.openai()
        url = self._base + path.lstrip("/")
        async with asyncio.timeout(timeout if math.isfinite(timeout) else None):
            if body is None:
                response = await sdk.get(url, cast_to=httpx2.Response)
            else:
                response = await sdk.post(url, cast_to=httpx2.Response, body=body)
            return json.loads(response.content)  # ValueError when it is not JSON (or empty)

    async def model_name(self) -> str:
        """The served model: configured, else the first one the server lists (asked once)."""
        if self._model:
            return self._model
        async with self._model_lock:
            if not self._model:
                timeout = self.settings.request_timeout or _LIST_TIMEOUT
                try:
                    listed = await self._post("/models", None, timeout)
                except Exception as err:
                    raise self._failed(err, timeout) from err
                first = _first_model(listed)
                self._model = first["id"]
                # vLLM's "root" is the model path: what HYMT_MODEL_FAMILY=auto reads.
                root = first.get("root")
                note_served_model(root if isinstance(root, str) and root else self._model)
        return self._model

    async def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        n: int = 1,
        temperature: float | None = None,
        top_p: float | None = None,
        model: str | None = None,
        source: str = "",
        priority: int | None = None,
        timeout: float | None = None,
        stretch: float = 1.0,
        until: float | None = None,
        seed: int | None = None,
    ) -> list[str]:
        """Send one user message (no system message) and return the n cleaned answers.

        ``source`` is the text being translated: a quote pair it has is not stripped.
        ``priority`` goes to vLLM (lower first); ``timeout`` defaults to :meth:`timeout_for`
        with *stretch* (the caller's retries widen it), cut at *until* (``time.monotonic()``).
        *seed* fixes vLLM's sampling (a failed check asks for a different answer with one).
        Each answer's tokens per second feed :attr:`decode_rate`.
        """
        fixed = self.settings.bench_tokens  # a benchmark's like-for-like work, never production
        if fixed is not None:
            max_tokens = fixed
        timeout = self.timeout_for(max_tokens, stretch) if timeout is None else timeout
        if until is not None:
            timeout = max(0.05, min(timeout, until - time.monotonic()))
        sampling = self.sampling()
        if sampling.max_tokens is not None and fixed is None:
            max_tokens = min(max_tokens, sampling.max_tokens)
        body: dict[str, Any] = {
            "model": model or await self.model_name(), "messages": chat_messages(prompt),
            "stream": False, "max_tokens": max_tokens, "n": n,
            "temperature": sampling.temperature if temperature is None else temperature,
            "top_p": sampling.top_p if top_p is None else top_p,
            "top_k": sampling.top_k, "repetition_penalty": sampling.repetition_penalty}
        if priority is not None and self.sends_priority:
            body["priority"] = int(priority)
        if seed is not None:
            body["seed"] = int(seed)
        if fixed is not None:
            body["ignore_eos"] = True
        started = time.monotonic()
        try:
            response = await self._post("/chat/completions", body, timeout)
        except (ModelError, asyncio.CancelledError):
            raise
        except APIStatusError as err:
            if err.status_code == 400 and "priority" in body and "priority" in str(err).lower():
                self.sends_priority = False
                _log.warning("the model server refuses request priorities (%s): sending none; "
                             "live messages are ordered by the app's queue only", err)
                return await self.complete(prompt, max_tokens=max_tokens, n=n,
                                           temperature=temperature, top_p=top_p, model=model,
                                           source=source, timeout=timeout, seed=seed)
            raise map_error(err, timeout, self.endpoint.base_url) from err
        except Exception as err:
            raise self._failed(err, timeout) from err
        contents = _contents(response)
        usage = response.get("usage") if isinstance(response, dict) else None
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if isinstance(tokens, int):
            self.decode_rate.observe(tokens // max(1, n), time.monotonic() - started)
        return [strip_wrapping(c, source) for c in contents]

    def sampling(self) -> Sampling:
        """What every call sends: the family in force's recommended sampling for the served
        model's size, each value overridable by its HYMT_ setting."""
        s, base = self.settings, family_in_force(self.settings).sampling
        return Sampling(
            temperature=base.temperature if s.temperature is None else s.temperature,
            top_p=base.top_p if s.top_p is None else s.top_p,
            top_k=base.top_k if s.top_k is None else s.top_k,
            repetition_penalty=(base.repetition_penalty if s.repetition_penalty is None
                                else s.repetition_penalty),
            max_tokens=base.max_tokens,
        )

    def _failed(self, err: Exception, timeout: float) -> Exception:
        """*err* mapped to ours; an unreachable server also makes the next call read the
        sidecar's state file afresh (a relaunched sidecar may be elsewhere, with a new key)."""
        mapped = map_error(err, timeout, self.endpoint.base_url)
        if isinstance(mapped, ModelUnavailableError):
            forget_state(self.settings)
        return mapped

    def timeout_for(self, max_tokens: int, stretch: float = 1.0) -> float:
        """Seconds a call for up to *max_tokens* may take: fixed (HYMT_REQUEST_TIMEOUT) or sized
        from the measured decode rate; *stretch* widens it on retries."""
        fixed = self.settings.request_timeout
        if fixed is not None:
            return fixed * max(1.0, stretch)
        return call_timeout(max_tokens, self.decode_rate.value,
                            floor=self.settings.timeout_floor, stretch=stretch)

    async def health(self, timeout: float = 3.0) -> bool:
        """True when the server answers (the probe of ``GET /health``: its /health, or the
        keyed /v1/models of a server without one)."""
        try:
            async with httpx.AsyncClient(timeout=timeout) as http:
                return await HealthCheck.of(self.endpoint).ask(http)
        except httpx.HTTPError:
            return False

    async def aclose(self) -> None:
        if self._sdk is not None and self._sdk_loop is asyncio.get_running_loop():
            await self._sdk.close()
        self._sdk = None


def _first_model(listed: object) -> dict[str, Any]:
    """The first entry of a ``GET /v1/models`` answer; ModelError when it lists none."""
    data = listed.get("data") if isinstance(listed, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    if not isinstance(first, dict) or not isinstance(first.get("id"), str) or not first["id"]:
        raise ModelError("The model server lists no model.")
    return first


def _close_in(loop: asyncio.AbstractEventLoop, sdk: AsyncOpenAI) -> None:
    """Close *sdk*'s pool on its own loop, without awaiting: its client is gone or replaced. A
    loop already closed took the pool's sockets with it."""
    if loop.is_closed() or sdk.is_closed():
        return
    try:
        loop.call_soon_threadsafe(lambda: loop.create_task(sdk.close()))
    except RuntimeError:  # the loop closed meanwhile
        pass


def _close_later(client: ModelClient) -> None:
    """Close a replaced client's connection pool once its in-flight calls had time to end."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop: nothing is pooled yet that a loop would need to close
    loop.call_later(60, lambda: loop.create_task(client.aclose()))


class ModelClients:
    """The client of the endpoint in force, kept while the endpoint stays the same.

    A relaunched sidecar has a new key (a new endpoint): the client is rebuilt then, and the
    old one's pool closed once its calls had time to end; in between every call reuses one
    connection pool. Built under a lock: two threads never build it twice.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._client: ModelClient | None = None

    def current(self) -> ModelClient:
        """The client of the endpoint the settings (and the sidecar's state file) name now."""
        return self.at(resolve_endpoint(self.settings))

    def at(self, endpoint: Endpoint) -> ModelClient:
        """The client of *endpoint*: the kept one when it is that endpoint's."""
        with self._lock:
            client = self._client
            if client is None or client.endpoint != endpoint:
                if client is not None:
                    _close_later(client)
                client = self._client = ModelClient(self.settings, endpoint)
            return client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
