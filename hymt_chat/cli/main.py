"""The `hymt-chat` command: a client of the core, like the chat UI. It says its errors, warnings
and notes in the terminal's language (:mod:`hymt_chat.cli.words`); what scripts read is the
same whatever the language."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from importlib import import_module

from hymt_chat import __version__
from hymt_chat.cli import words
from hymt_chat.errors import HymtError, InputError
from hymt_chat.settings import Settings

# Exit codes: 2 = the input was refused, 3 = the model server failed, 4 = the sidecar failed,
# 5 = printed a translation with parts missing (named on stderr).
EXIT_INPUT, EXIT_MODEL, EXIT_SIDECAR, EXIT_INCOMPLETE = 2, 3, 4, 5
_INPUT_ERRORS = InputError


def _read_text(arg: str | None) -> str:
    from hymt_chat.errors import NotTextError
    from hymt_chat.text.cleanup import decode_bytes

    if arg is not None and arg != "-":
        return arg
    try:
        return decode_bytes(sys.stdin.buffer.read())
    except NotTextError as err:  # its sentence names a file: here, standard input
        if err.said is not None:
            err.saying(err.said.key, **{**err.said.slots, "name": "stdin"})
        raise


def _settings(args: argparse.Namespace, **extra: object) -> Settings:
    overrides = {k: v for k, v in extra.items() if v is not None}
    if getattr(args, "base_url", None):
        overrides["base_url"] = args.base_url
    return Settings(**overrides)  # type: ignore[arg-type]


def cmd_translate(args: argparse.Namespace) -> int:
    from hymt_chat.engine.client import ModelClients
    from hymt_chat.engine.translator import Translation, Translator
    from hymt_chat.errors import IncompleteTranslationError
    from hymt_chat.words.said import Code

    settings = _settings(args, deadline=args.wait)
    text = _read_text(args.text)
    until = time.monotonic() + args.wait  # --wait is wall time, the calls in flight included

    async def translate() -> Translation:
        clients = ModelClients(settings)
        try:
            return await Translator(settings, clients).translate(text, args.to, args.source,
                                                                 user="cli", until=until)
        finally:  # the model client's pool is closed in its loop, before the loop ends
            await clients.aclose()

    try:
        result = asyncio.run(translate())
    except IncompleteTranslationError as err:
        # What was translated is printed, in order, the missing parts in the original and
        # marked; the exit status says it is not whole.
        out = err.partial.text  # type: ignore[attr-defined]
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
        words.note("cli_incomplete", error=words.error(err))
        return EXIT_INCOMPLETE
    if result.same_language:
        words.note("cli_same_language", language=Code(result.target))
    sys.stdout.write(result.text)
    if not result.text.endswith("\n"):
        sys.stdout.write("\n")
    for warning in result.warnings:  # what the checks still found: stdout stays the translation
        print(words.warning(warning), file=sys.stderr)
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from hymt_chat.lang.detect import detect_language
    from hymt_chat.text.cleanup import clean_text

    print(detect_language(clean_text(_read_text(args.text))) or "unsure")
    return 0


def cmd_languages(args: argparse.Namespace) -> int:
    from hymt_chat.lang.languages import LANGUAGES

    for lang in LANGUAGES:
        print(f"{lang.code:<8}{lang.english:<21}{lang.chinese}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hymt-chat", description="Live translation between 38 languages with Hunyuan-MT-7B."
    )
    parser.add_argument("--version", action="version", version=f"hymt-chat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("translate", help="translate TEXT (or stdin) and print only the result")
    p.add_argument("--to", required=True, metavar="CODE", help="target language (code or name)")
    p.add_argument("--from", dest="source", default="auto", metavar="CODE|auto")
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server (…/v1)")
    p.add_argument("--wait", type=float, default=30.0, metavar="S",
                   help="give up after this many seconds, wall time (default 30)")
    p.add_argument("text", nargs="?", metavar="TEXT", help="text to translate; '-' or absent: stdin")
    p.set_defaults(func=cmd_translate)

    p = sub.add_parser("detect", help="print the language code of TEXT, or 'unsure'")
    p.add_argument("text", nargs="?", metavar="TEXT")
    p.set_defaults(func=cmd_detect)

    p = sub.add_parser("languages", help="list the 38 languages")
    p.set_defaults(func=cmd_languages)

    p = sub.add_parser("hash-password", help="hash a support agent's password for HYMT_AGENTS")
    p.add_argument("name")
    p.set_defaults(func=lambda args: import_module("hymt_chat.service.auth").main([args.name]))

    from hymt_chat.cli.sidecar import add_sidecar_commands

    add_sidecar_commands(sub)
    from hymt_chat.cli.deploy import add_deploy_commands

    add_deploy_commands(sub)
    from hymt_chat.cli.apikeys import add_api_key_commands

    add_api_key_commands(sub)
    from hymt_chat.cli.memory import add_memory_commands

    add_memory_commands(sub)
    from hymt_chat.cli.privacy import add_privacy_commands

    add_privacy_commands(sub)
    from hymt_chat.cli.voice import add_voice_commands

    add_voice_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except _INPUT_ERRORS as err:
        print(f"hymt-chat: {words.error(err)}", file=sys.stderr)
        return EXIT_INPUT
    except HymtError as err:
        from hymt_chat.errors import SidecarError

        print(f"hymt-chat: {words.error(err)}", file=sys.stderr)
        return EXIT_SIDECAR if isinstance(err, SidecarError) else EXIT_MODEL
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
