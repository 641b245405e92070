"""Where the model server is: settings first, then the state file a running sidecar wrote."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from hymt_chat.settings import Settings
from hymt_chat.sidecar.private import write_private


@dataclass(frozen=True, slots=True)
class Endpoint:
    base_url: str  # ends with /v1
    api_key: str
    model: str | None = None

    @property
    def root(self) -> str:
        """Server root, for /health and /metrics which live outside /v1."""
        return self.base_url.rstrip("/").removesuffix("/v1")


def state_file(settings: Settings) -> Path:
    return settings.cache_dir / "run" / f"sidecar-{settings.port}.json"


def write_state(
    settings: Settings, endpoint: Endpoint, pid: int, state: str = "ready", **extra: object
) -> Path:
    """Record a launched sidecar so that `chainlit run app.py` alone can find it and its key."""
    path = state_file(settings)
    # Created 0600 (it holds the key): never a moment when another local user could read it.
    write_private(path, json.dumps({**asdict(endpoint), "pid": pid, "state": state, **extra}))
    return path


def resolve_endpoint(settings: Settings) -> Endpoint:
    """The server to talk to: HYMT_BASE_URL if set, else the local sidecar on HYMT_PORT."""
    if settings.base_url:
        return Endpoint(settings.base_url.rstrip("/"), settings.api_key, settings.model)
    path = state_file(settings)
    if path.exists():
        try:
            data = json.loads(path.read_text())
            return Endpoint(data["base_url"], data["api_key"], settings.model or data.get("model"))
        except (ValueError, KeyError, OSError):
            pass
    return Endpoint(f"http://{settings.host}:{settings.port}/v1", settings.api_key, settings.model)


def read_state(settings: Settings) -> dict[str, object]:
    """What the sidecar last said about itself ({} when no sidecar wrote anything)."""
    try:
        return dict(json.loads(state_file(settings).read_text()))
    except (OSError, ValueError):
        return {}
