"""Support agents' sign-in: hashes only, constant-time checks, no plain passwords accepted."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys

import pytest

from hymt_chat.service import auth
from hymt_chat.service.auth import (
    authenticate,
    check_password,
    hash_password,
    parse_agents,
    verify_password,
)
from hymt_chat.settings import Settings

FAST = {"n": 2**10, "r": 8, "p": 1}  # cheap parameters: tests only


def test_hash_has_the_documented_shape_and_verifies():
    encoded = hash_password("correct horse")
    scheme, n, r, p, salt, digest = encoded.split(":")
    assert (scheme, int(n), int(r), int(p)) == ("scrypt", 2**15, 8, 3)
    assert "$" not in encoded and "," not in encoded  # safe in .env and Compose, unquoted
    assert verify_password(encoded, "correct horse")
    assert not verify_password(encoded, "correct horse ")
    assert "correct" not in encoded


def test_salts_differ():
    assert hash_password("pw123456", **FAST) != hash_password("pw123456", **FAST)


def test_pbkdf2_hashes_made_elsewhere_are_accepted():
    salt = b"0123456789abcdef"
    digest = hashlib.pbkdf2_hmac("sha256", b"s3cret-pass", salt, 200_000)
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    encoded = f"pbkdf2_sha256:200000:{b64(salt)}:{b64(digest)}"
    assert parse_agents(f"carol:{encoded}") == {"carol": encoded}
    assert verify_password(encoded, "s3cret-pass")
    assert not verify_password(encoded, "s3cret-pas")


def test_agents_list_parses_names_and_hashes():
    a, b = hash_password("alice-pass", **FAST), hash_password("bob-pass", **FAST)
    agents = parse_agents(f" alice:{a} , bob.smith@example.com:{b},")
    assert agents == {"alice": a, "bob.smith@example.com": b}
    assert parse_agents("") == {}


@pytest.mark.parametrize("spec", [
    "alice:hunter2",  # a plain password
    "alice:scrypt:16384:8:1:short",  # truncated
    "alice:scrypt:1000:8:1:c2FsdHNhbHQ:aGFzaGhhc2hoYXNoaGFzaA",  # N not a power of two
    "alice:pbkdf2_sha256:1000:c2FsdHNhbHQ:aGFzaGhhc2hoYXNoaGFzaA",  # far too few iterations
    "alice",  # no hash at all
    ":scrypt:16384:8:1:c2FsdHNhbHQ:aGFzaGhhc2hoYXNoaGFzaA",  # no name
])
def test_anything_but_a_hash_is_refused_without_echoing_it(spec):
    with pytest.raises(ValueError) as err:
        parse_agents(spec)
    assert "hunter2" not in str(err.value)


def test_a_name_given_twice_is_refused():
    h = hash_password("x-password", **FAST)
    with pytest.raises(ValueError, match="twice"):
        parse_agents(f"alice:{h},alice:{h}")


def test_check_password_known_unknown_and_wrong():
    agents = parse_agents(f"alice:{hash_password('alice-pass', **FAST)}")
    assert check_password(agents, "alice", "alice-pass")
    assert check_password(agents, " alice ", "alice-pass")
    assert not check_password(agents, "alice", "bob-pass")
    assert not check_password(agents, "mallory", "alice-pass")
    assert not check_password({}, "alice", "")


def test_unknown_names_cost_a_hash_too(monkeypatch):
    calls = []
    real = auth.verify_password
    monkeypatch.setattr(auth, "verify_password", lambda e, p: calls.append(e) or real(e, p))
    assert not check_password({}, "nobody", "guess")
    assert calls == [auth._dummy_hash()]


def test_comparison_is_constant_time(monkeypatch):
    seen = []
    real = auth.hmac.compare_digest
    monkeypatch.setattr(auth.hmac, "compare_digest", lambda a, b: seen.append(1) or real(a, b))
    verify_password(hash_password("abcdefgh", **FAST), "abcdefgh")
    assert seen == [1]


async def test_authenticate_reads_the_setting():
    settings = Settings(agents=f"alice:{hash_password('alice-pass', **FAST)}")
    assert await authenticate(settings.agents, "alice", "alice-pass")
    assert not await authenticate(settings.agents, "alice", "nope")


def test_hash_password_command_reads_stdin_and_prints_an_entry():
    out = subprocess.run([sys.executable, "-m", "hymt_chat.service.auth", "alice"],
                         input=b"long-password\n", capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = out.stdout.decode().strip()
    assert line.startswith("alice:scrypt:") and "long-password" not in line
    agents = parse_agents(line)
    assert check_password(agents, "alice", "long-password")


def test_hash_password_command_refuses_short_passwords():
    out = subprocess.run([sys.executable, "-m", "hymt_chat.service.auth", "alice"], input=b"short\n",
                         capture_output=True, timeout=60)
    assert out.returncode == 2 and not out.stdout


def test_cli_hash_password_prints_a_verifiable_entry():
    import subprocess
    import sys

    from hymt_chat.service.auth import check_password, parse_agents

    out = subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "hash-password", "alice"],
                         input="correct horse battery\n", capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    entry = out.stdout.strip()
    assert entry.startswith("alice:scrypt:") and "correct horse" not in entry
    agents = parse_agents(entry)
    assert check_password(agents, "alice", "correct horse battery")
    assert not check_password(agents, "alice", "wrong horse battery")
