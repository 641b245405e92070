"""Is the model there? One state for the app's ``GET /health``, its warm-up wait and its banner.

The answer combines what the model server says (:class:`~hymt_chat.sidecar.probe.HealthCheck`,
the probe the supervisor uses too) with what the sidecar last
wrote about itself (``endpoint.read_state``): a server that does not answer while the sidecar is
loading is "starting", while it is being brought back is "restarting", otherwise "down".
"""

from __future__ import annotations

import functools
import os
import ssl
from dataclasses import dataclass
from typing import Literal

import httpx

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, read_state, resolve_endpoint
from hymt_chat.sidecar.probe import HealthCheck

__all__ = [
    "ModelState",
    "Probe",
    "health_response",
    "is_demo_model",
    "model_state",
    "probe_model",
]

ModelState = Literal["ready", "starting", "restarting", "down"]
DEMO_MARKERS = ("qwen2.5-coder-0.5b",)


def model_state(model_ok: bool, sidecar_state: object) -> ModelState:
    """The model's state from the probe and the sidecar's own word (the probe wins)."""
    if model_ok:
        return "ready"
    if sidecar_state in ("starting", "restarting"):
        return sidecar_state
    return "down"


def health_response(state: ModelState) -> tuple[int, dict[str, str]]:
    """(HTTP status, body) of ``GET /health``: 200 only when the model answers."""
    if state == "ready":
        return 200, {"status": "ok", "vllm": "ready"}
    return 503, {"status": "unavailable", "vllm": state}


@dataclass(frozen=True, slots=True)
class Probe:
    state: ModelState
    model_root: str | None = None  # what the server says it serves (a path or a hub name)
    slow: bool = False  # the server did not answer within the probe's timeout (not refused)


async def _model_root(endpoint: Endpoint, http: httpx.AsyncClient) -> str | None:
    try:
        response = await http.get(
            f"{endpoint.base_url}/models", headers={"Authorization": f"Bearer {endpoint.api_key}"}
        )
        data = response.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not data or not isinstance(data[0], dict):
        return None
    first = data[0]
    return str(first.get("root") or first.get("id") or "") or None


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once: building one costs ~20 ms of CPU (it loads the
    CA bundle), which a probe per client would pay again each time, on the event loop."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


async def probe_model(
    settings: Settings, *, timeout: float = 3.0, with_model: bool = False
) -> Probe:
    """Ask the server (resolved afresh, so a sidecar started later is found) how it is."""
    endpoint = resolve_endpoint(settings)
    sidecar = read_state(settings).get("state")
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=_tls()) as http:
            ok = await HealthCheck.of(endpoint).ask(http)
            root = await _model_root(endpoint, http) if ok and with_model else None
    except httpx.TimeoutException:
        return Probe(model_state(False, sidecar), None, slow=True)
    except httpx.HTTPError:
        ok, root = False, None
    return Probe(model_state(ok, sidecar), root)


def is_demo_model(settings: Settings, model_root: str | None = None) -> bool:
    """True when the served model is the embedded demo, not Hunyuan-MT.

    ``HYMT_DEMO_MODEL`` (set by ``hymt-chat up``) decides when present; otherwise the model the
    server reports is compared with the demo's folder and name.
    """
    flag = os.environ.get("HYMT_DEMO_MODEL", "").strip().lower()
    if flag in ("1", "true", "yes"):
        return True
    if flag in ("0", "false", "no"):
        return False
    if not model_root:
        return False
    root = model_root.rstrip("/").lower()
    return root == str(settings.demo_model_dir).rstrip("/").lower() or any(
        marker in root for marker in DEMO_MARKERS
    )
