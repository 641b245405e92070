"""Support agents' passwords: hashing, the ``HYMT_AGENTS`` list, and checking a sign-in.

Only hashes are ever configured: ``HYMT_AGENTS="alice:scrypt:32768:8:3:<salt>:<hash>,bob:…"``.
A hash is made with :func:`hash_password` (``python -m hymt_chat.service.auth alice``, to become
``hymt-chat hash-password``). scrypt from the standard library, with OWASP's parameters
N=2^15, r=8, p=3 (32 MiB of memory; 0.4 s on this project's 2-core CPU): memory-hard, so a
stolen list is slow to attack on GPUs. ``pbkdf2_sha256:<iterations>:<salt>:<hash>`` is also
accepted (for hashes made elsewhere). The encoding uses no ``$``, so the value survives .env
files and Compose interpolation unquoted. Comparison is constant-time, and an unknown name
costs the same work as a known one (no user enumeration by timing).

Nothing here imports Chainlit; the app's ``@cl.password_auth_callback`` calls
:func:`authenticate`.

A sign-in carries a stamp of the agent's hash (:func:`claims`, kept in Chainlit's token): when
the password changes, so does the hash, and the door refuses the old token
(:func:`token_check`) — a session ends when its password changes.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import getpass
import hashlib
import hmac
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

__all__ = [
    "authenticate",
    "check_password",
    "claims",
    "hash_password",
    "main",
    "parse_agents",
    "token_check",
    "verify_password",
]

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 3
_MAXMEM = 256 * 1024 * 1024
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-+")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P,
                  salt: bytes | None = None) -> str:
    """``scrypt:N:r:p:<salt>:<hash>`` for *password* (random 16-byte salt)."""
    if not password:
        raise ValueError("An empty password cannot be hashed.")
    salt = salt or os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM,
                            dklen=32)
    return f"scrypt:{n}:{r}:{p}:{_b64(salt)}:{_b64(digest)}"


def _derive(encoded: str, password: str) -> tuple[bytes, bytes]:
    """(expected, computed) digests for *password* under the scheme of *encoded*."""
    scheme, *fields = encoded.split(":")
    if scheme == "scrypt" and len(fields) == 5:
        n, r, p = (int(f) for f in fields[:3])
        salt, expected = _unb64(fields[3]), _unb64(fields[4])
        computed = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM,
                                  dklen=len(expected))
        return expected, computed
    if scheme == "pbkdf2_sha256" and len(fields) == 3:
        iterations = int(fields[0])
        salt, expected = _unb64(fields[1]), _unb64(fields[2])
        computed = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations,
                                       dklen=len(expected))
        return expected, computed
    raise ValueError("not a password hash (scrypt:… or pbkdf2_sha256:…)")


def _check_format(encoded: str) -> None:
    scheme, *fields = encoded.split(":")
    try:
        if scheme == "scrypt" and len(fields) == 5:
            n, r, p = (int(f) for f in fields[:3])
            ok = n > 1 and n & (n - 1) == 0 and r > 0 and p > 0
        elif scheme == "pbkdf2_sha256" and len(fields) == 3:
            ok = int(fields[0]) >= 100_000
        else:
            ok = False
        ok = ok and len(_unb64(fields[-2])) >= 8 and len(_unb64(fields[-1])) >= 16
    except (ValueError, IndexError):
        ok = False
    if not ok:
        raise ValueError("not a password hash (scrypt:… or pbkdf2_sha256:…)")


def verify_password(encoded: str, password: str) -> bool:
    """True when *password* matches the hash *encoded* (constant-time comparison)."""
    expected, computed = _derive(encoded, password)
    return hmac.compare_digest(expected, computed)


def parse_agents(spec: str) -> dict[str, str]:
    """``"alice:scrypt:…,bob:scrypt:…"`` -> {name: hash}. Plain passwords are refused.

    Raises ValueError naming the bad entry (never echoing what follows the name).
    """
    agents: dict[str, str] = {}
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        name, sep, encoded = entry.partition(":")
        name = name.strip()
        if not sep or not name or not set(name) <= _NAME_CHARS:
            raise ValueError(
                "HYMT_AGENTS entries are name:hash, separated by commas; "
                f"entry {len(agents) + 1} has no valid name."
            )
        try:
            _check_format(encoded.strip())
        except ValueError:
            raise ValueError(
                f"HYMT_AGENTS: the entry for {name!r} is not a password hash. Never configure a "
                "plain password: make a hash with `python -m hymt_chat.service.auth " + name + "`."
            ) from None
        if name in agents:
            raise ValueError(f"HYMT_AGENTS names {name!r} twice.")
        agents[name] = encoded.strip()
    return agents


def _stamp(encoded: str) -> str:
    """A short digest of an agent's password hash: it changes with the password and says
    nothing about it (the hash itself never leaves the server)."""
    return hashlib.sha256(b"hymt-chat sign-in:" + encoded.encode()).hexdigest()[:24]


def claims(agents: Mapping[str, str], name: str) -> dict[str, str]:
    """What a signed-in agent's token carries (Chainlit's user metadata): the role, and the
    stamp of their password."""
    return {"role": "agent", "stamp": _stamp(agents[name.strip()])}


def token_check(agents: Mapping[str, str]) -> Callable[[Any], bool]:
    """Is a token's user (its ``identifier`` and ``metadata``) still good: an agent whose
    password is the one it was issued under? (A token of before the stamp has none: its
    agent signs in once more.)"""
    def valid(user: Any) -> bool:
        encoded = agents.get(getattr(user, "identifier", None) or "")
        metadata = getattr(user, "metadata", None)
        stamp = metadata.get("stamp") if isinstance(metadata, Mapping) else None
        return encoded is not None and isinstance(stamp, str) and hmac.compare_digest(
            stamp, _stamp(encoded))

    return valid


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return hash_password("not a real password")


def check_password(agents: Mapping[str, str], username: str, password: str) -> bool:
    """True when *username* is an agent and *password* is theirs.

    CPU-bound (about 0.4 s): from async code use :func:`authenticate`. Unknown names do the
    same work against a dummy hash, so response time does not tell which names exist.
    """
    encoded = agents.get(username.strip())
    if encoded is None:
        verify_password(_dummy_hash(), password)
        return False
    return verify_password(encoded, password)


async def authenticate(agents_spec: str, username: str, password: str) -> bool:
    """Check a sign-in against ``settings.agents`` without blocking the event loop."""
    return await asyncio.to_thread(check_password, _parsed(agents_spec), username, password)


@lru_cache(maxsize=4)
def _parsed(spec: str) -> dict[str, str]:
    return parse_agents(spec)


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``name:hash`` for HYMT_AGENTS; the password is asked twice (or read from stdin)."""
    parser = argparse.ArgumentParser(
        prog="hymt-chat hash-password",
        description="Hash a support agent's password for HYMT_AGENTS (the password is never "
                    "stored or printed).",
    )
    parser.add_argument("name", help="the agent's sign-in name")
    args = parser.parse_args(argv)
    if not set(args.name) <= _NAME_CHARS:
        parser.error("a name may use letters, digits and . _ @ - + only")
    if sys.stdin.isatty():
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            print("The two passwords differ.", file=sys.stderr)
            return 2
    else:
        password = sys.stdin.readline().rstrip("\n")
    if len(password) < 8:
        print("Use at least 8 characters.", file=sys.stderr)
        return 2
    print(f"{args.name}:{hash_password(password)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
