from pathlib import Path

import pytest
from pydantic import ValidationError

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, read_state, resolve_endpoint, write_state

ROOT = Path(__file__).resolve().parent.parent


def test_every_setting_is_documented_in_env_example():
    documented = (ROOT / ".env.example").read_text()
    for name in Settings.model_fields:
        assert f"HYMT_{name.upper()}=" in documented, name


def test_reads_prefixed_environment(monkeypatch):
    monkeypatch.setenv("HYMT_BASE_URL", "http://gpu:8000/v1")
    monkeypatch.setenv("HYMT_MAX_INPUT_CHARS", "5000")
    monkeypatch.setenv("HYMT_DEFAULT_TARGET", "zh")
    s = Settings()
    assert (s.base_url, s.max_input_chars, s.default_target) == ("http://gpu:8000/v1", 5000, "zh")


def test_reads_dotenv_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("HYMT_REQUEST_TIMEOUT=7.5\nHYMT_MODEL=m\n")
    s = Settings()
    assert s.request_timeout == 7.5 and s.model == "m"


def test_invalid_values_are_refused(monkeypatch):
    monkeypatch.setenv("HYMT_MAX_INPUT_CHARS", "-1")
    with pytest.raises(ValidationError):
        Settings()


def test_endpoint_prefers_base_url_then_sidecar_state(tmp_path):
    s = Settings(cache_dir=tmp_path, port=9999)
    assert resolve_endpoint(s).base_url == "http://127.0.0.1:9999/v1"
    write_state(s, Endpoint("http://127.0.0.1:9999/v1", "secret", "hymt"), pid=1, state="ready")
    assert resolve_endpoint(s) == Endpoint("http://127.0.0.1:9999/v1", "secret", "hymt")
    assert read_state(s)["state"] == "ready"
    assert (s.cache_dir / "run" / "sidecar-9999.json").stat().st_mode & 0o077 == 0  # key is private
    explicit = Settings(cache_dir=tmp_path, port=9999, base_url="http://x/v1/", api_key="k")
    assert resolve_endpoint(explicit) == Endpoint("http://x/v1", "k", None)
    assert resolve_endpoint(explicit).root == "http://x"
