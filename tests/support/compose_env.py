"""Just enough of Compose's variable interpolation to read our compose files without Docker.

Supports ``$$``, ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?err}``
and ``${VAR?err}`` — what compose.yaml and deploy/compose/*.yaml use. When a real
``docker compose`` (or Compose v2 ``docker-compose``) is on the machine, the tests also ask it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

_VAR = re.compile(r"\$(?:(?P<dollar>\$)|\{(?P<braced>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
_BRACED = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>.*))?$", re.S)


class MissingVariable(KeyError):
    pass


def interpolate(text: str, env: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        if match["dollar"]:
            return "$"
        if match["plain"]:
            return env.get(match["plain"], "")
        parts = _BRACED.match(match["braced"])
        if parts is None:
            raise ValueError(f"invalid interpolation: {match[0]}")
        name, op, arg = parts["name"], parts["op"], parts["arg"] or ""
        value = env.get(name)
        unset = value is None or (op is not None and op.startswith(":") and value == "")
        if op in (":-", "-"):
            return arg if unset else value  # type: ignore[return-value]
        if op in (":?", "?"):
            if unset:
                raise MissingVariable(f"{name}: {arg}")
            return value  # type: ignore[return-value]
        return value or ""

    return _VAR.sub(one, text)


def interpolate_tree(node: Any, env: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, env)
    if isinstance(node, list):
        return [interpolate_tree(item, env) for item in node]
    if isinstance(node, dict):
        return {key: interpolate_tree(value, env) for key, value in node.items()}
    return node


def command_args(command: str | list[str]) -> list[str]:
    """Compose splits a string command like a shell would (after interpolation)."""
    return shlex.split(command) if isinstance(command, str) else list(command)
