"""The product's Chainlit set-up: config, UI translations and public assets are what we ship."""

import importlib.util
import json
import re
import struct
import tomllib
from pathlib import Path

from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.documents import DOCUMENT_TYPES, KIND_WORDS, MAX_FILE_BYTES, MAX_FILES
from hymt_chat.words.catalogs import catalog

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / ".chainlit" / "config.toml").read_text(encoding="utf-8"))


def test_config_is_set_for_the_product():
    assert CONFIG["UI"]["name"] == "hymt-chat"
    assert CONFIG["features"]["unsafe_allow_html"] is False
    assert CONFIG["features"]["user_message_markdown"] is False  # pasted text shown as typed
    assert CONFIG["UI"]["custom_css"] == "/public/style.css"
    assert (ROOT / CONFIG["UI"]["custom_js"].lstrip("/")).exists()


def test_upload_limits_leave_the_refusals_to_the_app():
    """The page takes a file of any kind (an empty ``accept``: Chainlit's own refusal is a toast
    of MIME types, in English); the app reads it or says why not, naming every kind it reads
    (documents.KIND_WORDS; tests/test_file_errors.py). Chainlit's size and count limits are far
    above the app's, for the same reason: its toasts ("File is larger than 2 MB", "Too many
    files") are English, the app's sentences are the page's (tests/test_upload_limits.py)."""
    upload = CONFIG["features"]["spontaneous_file_upload"]
    assert upload["enabled"] is True
    assert upload["max_size_mb"] * 1_000_000 >= 5 * MAX_FILE_BYTES  # the page counts 10**6
    assert upload["max_files"] >= 2 * MAX_FILES
    assert upload["accept"] == []
    assert {kind for kind, _ in DOCUMENT_TYPES.values()} <= set(KIND_WORDS)


def _keys(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _keys(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_ui_translations_are_chainlits_for_every_language_it_ships():
    """The app's wording of Chainlit's strings is served over these files, in the page's
    language (hymt_chat/modes/chat_words.py, tests/test_chat_words.py)."""
    shipped = Path(importlib.util.find_spec("chainlit").origin).parent / "translations"
    ours = ROOT / ".chainlit" / "translations"
    assert {p.name for p in ours.glob("*.json")} == {p.name for p in shipped.glob("*.json")}
    for path in shipped.glob("*.json"):
        mine = json.loads((ours / path.name).read_text("utf-8"))
        assert set(_keys(mine)) == set(_keys(json.loads(path.read_text("utf-8")))), path.name


def test_agents_sign_in_with_a_name_not_an_email_address():
    """Chainlit's sign-in form labels its first field from ``auth.login.form.email``; agents
    sign in with the name HYMT_AGENTS lists, whatever the page's language (the page's words
    go over Chainlit's files: hymt_chat/modes/chat_words.py)."""
    for code, name in (("en", "name"), ("zh", "名字"), ("fr", "nom"), ("ja", "名前")):
        assert name in catalog(code).group("chat")["auth.login.form.email.label"], code
    for code, words in ((lang.code, catalog(lang.code).group("chat")) for lang in LANGUAGES):
        shown = {k: v for k, v in words.items() if k.startswith("auth.login.form.email.")}
        assert "@" not in shown["auth.login.form.email.placeholder"], code
        assert "alice" in shown["auth.login.form.email.placeholder"], code
        assert "mail" not in json.dumps(list(shown.values()), ensure_ascii=False).lower(), code


def test_logos_and_favicon_are_real_pngs():
    for name in ("logo_light.png", "logo_dark.png", "favicon.png"):
        data = (ROOT / "public" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        width, height = struct.unpack(">II", data[16:24])
        assert 16 <= width <= 512 and 16 <= height <= 512, name


def test_welcome_says_plainly_when_it_is_the_demo_model():
    """In every readme (the page shows the one in its language; chainlit.md only stops
    Chainlit from writing its own)."""
    welcome = (ROOT / "chainlit_en-US.md").read_text(encoding="utf-8")
    assert "Demo model" in welcome and "not* Hunyuan-MT" in welcome
    said = {"zh-CN": "演示模型", "fr-FR": "Modèle de démonstration", "ja": "デモモデル"}
    assert {p.stem.removeprefix("chainlit_") for p in ROOT.glob("chainlit_*.md")} == {
        "en-US", *said}
    for tag, demo in said.items():
        assert demo in (ROOT / f"chainlit_{tag}.md").read_text(encoding="utf-8"), tag


FEEDBACK_CLASSES = ("positive-feedback-on", "positive-feedback-off", "negative-feedback-on",
                    "negative-feedback-off")


def test_chainlits_feedback_buttons_are_hidden_since_the_guard_refuses_feedback():
    """The guard answers /feedback 404 (hymt_chat/service/http_guard.py, CHAINLIT_USED), so
    style.css hides the thumbs buttons by the classes the installed bundle gives them (the
    feedback component's className in chainlit/frontend/dist/assets/index-*.js)."""
    spec = importlib.util.find_spec("chainlit")
    assert spec is not None and spec.origin is not None
    bundle = "".join(p.read_text(encoding="utf-8") for p in
                     (Path(spec.origin).parent / "frontend" / "dist" / "assets").glob("index-*.js"))
    assert all(f'"text-muted-foreground {c}"' in bundle or f'"text-green-600 {c}"' in bundle
               or f'"text-red-600 {c}"' in bundle for c in FEEDBACK_CLASSES)
    css = (ROOT / "public" / "style.css").read_text(encoding="utf-8")
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    hidden = {s.strip() for selectors, body in rules if re.search(r"display:\s*none", body)
              for s in selectors.split(",")}
    assert {f".{c}" for c in FEEDBACK_CLASSES} <= hidden, hidden
