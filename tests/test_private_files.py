"""What hymt-chat writes is its owner's alone: 0600 files in 0700 folders, keys never exposed."""

from __future__ import annotations

import os

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, write_state
from hymt_chat.sidecar.private import make_private, write_private


def _mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_a_secret_is_created_owner_only_even_with_an_open_umask(tmp_path):
    old = os.umask(0)  # the worst case: whatever the process had
    try:
        write_private(tmp_path / "run" / "key.json", '{"api_key": "s3cret"}')
    finally:
        os.umask(old)
    assert _mode(tmp_path / "run" / "key.json") == 0o600
    assert _mode(tmp_path / "run") == 0o700
    assert list((tmp_path / "run").iterdir()) == [tmp_path / "run" / "key.json"]  # no tmp left


def test_the_sidecar_state_file_with_its_key_is_owner_only(tmp_path):
    settings = Settings(cache_dir=tmp_path, port=8123)
    old = os.umask(0o022)
    try:
        path = write_state(settings, Endpoint("http://127.0.0.1:8123/v1", "key"), pid=1)
    finally:
        os.umask(old)
    assert _mode(path) == 0o600 and '"api_key": "key"' in path.read_text()


def test_make_private_tightens_old_folders_and_sets_the_umask(tmp_path):
    (tmp_path / "cache" / "logs").mkdir(parents=True, mode=0o755)
    (tmp_path / "cache").chmod(0o755)
    old = os.umask(0o022)
    try:
        make_private(tmp_path / "cache")
        (tmp_path / "cache" / "history.db").write_text("x")  # as SQLite would create it
        created = _mode(tmp_path / "cache" / "history.db")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "cache") == 0o700 and _mode(tmp_path / "cache" / "logs") == 0o700
    assert created == 0o600


def test_secure_is_added_to_a_cookie_once():
    from hymt_chat.service.http_guard import secure_cookie

    assert secure_cookie("access_token=x; Path=/; HttpOnly") == (
        "access_token=x; Path=/; HttpOnly; Secure")
    assert secure_cookie("a=1; Secure; HttpOnly") == "a=1; Secure; HttpOnly"


def test_metrics_is_open_locally_and_closed_once_agents_sign_in():
    from hymt_chat.service.http_guard import metrics_refusal

    assert metrics_refusal(None, None, sign_in=False) is None
    assert metrics_refusal(None, None, sign_in=True)[0] == 403  # type: ignore[index]
    assert metrics_refusal("t0ken", None, sign_in=False)[0] == 401  # type: ignore[index]
    assert metrics_refusal("t0ken", "Bearer nope", sign_in=True)[0] == 401  # type: ignore[index]
    assert metrics_refusal("t0ken", "Bearer t0ken", sign_in=True) is None


def test_the_page_gets_nonces_on_its_scripts_and_no_third_party_stylesheets():
    from hymt_chat.service.http_guard import harden_page, page_policy

    page = ('<link rel="preconnect" href="https://fonts.googleapis.com" />'
            '<link href="https://fonts.googleapis.com/css2?family=Inter" rel="stylesheet" />'
            '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/katex.min.css" />'
            '<link rel="stylesheet" href="/public/style.css">'
            '<script>const global = globalThis;</script><script src="/assets/a.js"></script>')
    out = harden_page(page, "N0NCE")
    assert "googleapis" not in out and "jsdelivr" not in out and "/public/style.css" in out
    assert out.count('<script nonce="N0NCE"') == 2
    policy = page_policy("N0NCE")
    assert "script-src 'self' 'nonce-N0NCE' 'unsafe-eval'" in policy
    assert "unsafe-inline" not in policy.split("style-src")[0]  # no inline script and "frame-ancestors 'none'" in policy
    assert "frame-ancestors" not in page_policy("N0NCE", allow_framing=True)
