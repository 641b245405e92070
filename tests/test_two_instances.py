"""Each app process keeps Chainlit's files in a folder of its own under the cache folder: stopping
one never deletes another's (Chainlit removes its files folder when it stops), and a folder
left by a process that died is removed at the next start.

Two real apps (``chainlit run app.py``) from this checkout, one cache folder, the stand-in
model; and the folder's claim (:func:`hymt_chat.service.web.own_files`) in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import types
from pathlib import Path

import docx
import httpx

from hymt_chat.modes.kiosk import KIOSK_PROFILE
from hymt_chat.service.web import FILES_ROOT, own_files
from tests.support.browser_client import element, file_link, send_files, upload
from tests.support.chainlit_app import app_env, running_app
from tests.support.ports import free_port
from tests.support.stub_model import StubModel
from tests.support.tabs import Tab, marked

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _letter() -> bytes:
    document = docx.Document()
    document.add_paragraph("Bonjour, votre commande numéro 4711 est en retard.")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _folders(cache: Path) -> set[str]:
    return {p.name for p in (cache / FILES_ROOT).iterdir() if p.is_dir()}


def test_stopping_one_instance_leaves_the_others_files(tmp_path):
    cache = tmp_path / "cache"
    dead = cache / FILES_ROOT / "1-deadbeef"  # a crashed process's folder: its lock is free
    (dead / "0e7f7a4c-7b1e-4a54-9a52-1f0e6c0f9d3b").mkdir(parents=True)
    (dead / ".lock").touch()

    async def kept_across_the_stop(one: str, stop) -> dict[str, object]:
        out: dict[str, object] = {}
        async with Tab(one) as tab:
            link = file_link(one, tab, upload(one, tab, "notes.txt", b"Bonjour !", "text/plain"))
            stop()  # the second instance stops while this tab holds a file
            out["link"] = httpx.get(link, timeout=30).status_code
        async with Tab(one, profile=KIOSK_PROFILE) as kiosk:
            out["kiosk"] = await kiosk.wait("Welcome", "No such file", "Something went wrong")
        async with Tab(one) as tab:
            await send_files(tab, upload(one, tab, "lettre.docx", _letter(), DOCX))
            out["docx"] = (await element(tab, ".en.docx"))["name"]
            out["said"] = tab.said("No such file") + tab.said("Something went wrong")
        return out

    with StubModel(answer=marked) as stub, contextlib.ExitStack() as second:
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CACHE_DIR=str(cache), HYMT_CHECKS="false", HYMT_AGENTS="")
        env.pop("CHAINLIT_AUTH_SECRET", None)
        with running_app({**env, "HYMT_PORT": str(free_port())}, free_port(),
                         tmp_path / "one.log") as one:
            second.enter_context(running_app({**env, "HYMT_PORT": str(free_port())},
                                             free_port(), tmp_path / "two.log"))
            both = _folders(cache)
            assert len(both) == 2 and dead.name not in both  # one each; the dead one gone
            out = asyncio.run(kept_across_the_stop(one, second.close))
            assert len(_folders(cache)) == 1  # the second's own folder went with it
        assert _folders(cache) == set()  # and the first's with it
    assert out["link"] == 200
    assert out["kiosk"] == "Welcome"
    assert out["docx"] == "lettre.en.docx" and out["said"] == []


def test_a_folder_is_kept_while_its_process_lives(tmp_path):
    """The claim in this process: a folder whose lock is held stays; once let go, the next
    start removes it. Chainlit's modules are pointed at the new folder."""
    chainlit_like = types.ModuleType("chainlit_like")
    chainlit_like.FILES_DIRECTORY = tmp_path / ".files"  # type: ignore[attr-defined]
    first = own_files(tmp_path, chainlit_like)
    (first.path / "session").mkdir()
    second = own_files(tmp_path, chainlit_like)
    assert first.path.is_dir() and second.path.is_dir() and first.path != second.path
    assert chainlit_like.FILES_DIRECTORY == second.path  # type: ignore[attr-defined]
    assert first.path.stat().st_mode & 0o777 == 0o700
    os.close(first._lock)  # the first process ends without removing its folder
    third = own_files(tmp_path, chainlit_like)
    assert not first.path.exists() and second.path.is_dir() and third.path.is_dir()
