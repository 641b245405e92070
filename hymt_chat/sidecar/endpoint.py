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


def connect_host(bind: str) -> str:
    """The address to reach a server bound to *bind* on this host: a server bound to every
    interface (``0.0.0.0``, or an empty host) is reached on the loopback."""
    return "127.0.0.1" if bind in ("0.0.0.0", "") else bind


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


# path -> ((mtime_ns, size, inode) when read, its content). write_state replaces the file
# atomically, so a new sidecar's file is a new inode: the stamp changes with every write.
_READ: dict[Path, tuple[tuple[int, int, int], dict[str, object]]] = {}


def _state_of(path: Path) -> dict[str, object] | None:
    """The state file's content, read only when it changed since the last read (its stamp);
    None when it is absent or unreadable (not remembered: the next call looks again)."""
    try:
        st = path.stat()
    except OSError:
        _READ.pop(path, None)
        return None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    seen = _READ.get(path)
    if seen is not None and seen[0] == stamp:
        return seen[1]
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    _READ[path] = (stamp, data)
    return data


def forget_state(settings: Settings) -> None:
    """Read the state file afresh next time (the endpoint it named failed: a stamp that did
    not change, on a file system with coarse times, must not keep a dead endpoint)."""
    _READ.pop(state_file(settings), None)


def resolve_endpoint(settings: Settings) -> Endpoint:
    """The server to talk to: HYMT_BASE_URL if set, else the local sidecar on HYMT_PORT.

    The sidecar's state file is read once, and again only when it changes or after
    :func:`forget_state` — this runs before every model call.
    """
    if settings.base_url:
        return Endpoint(settings.base_url.rstrip("/"), settings.api_key, settings.model)
    data = _state_of(state_file(settings))
    if data is not None:
        try:
            return Endpoint(str(data["base_url"]), str(data["api_key"]),
                            settings.model or data.get("model"))  # type: ignore[arg-type]
        except KeyError:
            pass
    return Endpoint(f"http://{settings.host}:{settings.port}/v1", settings.api_key, settings.model)


def read_state(settings: Settings) -> dict[str, object]:
    """What the sidecar last said about itself ({} when no sidecar wrote anything)."""
    return dict(_state_of(state_file(settings)) or {})
