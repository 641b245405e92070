"""Parse vLLM API-server command lines with the installed vLLM's own parser.

Run by the sidecar's Python (where vLLM lives): ``python tests/support/vllm_args.py`` reads a
JSON list of argument lists (what follows ``-m vllm.entrypoints.openai.api_server``) on stdin
and prints, for each, ``{"ok": true, "values": {...}}`` (what the parser read, after the
server's own validation) or ``{"ok": false, "error": "..."}`` (the parser's complaint). One
process parses them all: importing vLLM takes seconds. The parser is the one the entrypoint
builds: ``make_arg_parser`` of ``vllm.entrypoints.launchers.cli_args`` (0.29 and later) or
``vllm.entrypoints.openai.cli_args`` (before).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

try:
    from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args
from vllm.utils.argparse_utils import FlexibleArgumentParser


def parse(argv: list[str]) -> dict[str, object]:
    parser = make_arg_parser(FlexibleArgumentParser(description="vllm_args"))
    complaint = io.StringIO()
    try:
        with contextlib.redirect_stderr(complaint):
            args = parser.parse_args(argv)
            validate_parsed_serve_args(args)
    except SystemExit:
        return {"ok": False, "error": complaint.getvalue().strip().splitlines()[-1:]}
    except (TypeError, ValueError) as err:  # validation refusing a combination
        return {"ok": False, "error": [f"{type(err).__name__}: {err}"]}
    return {"ok": True, "values": {k: v for k, v in vars(args).items()
                                   if isinstance(v, (str, int, float, bool, dict, list, type(None)))}}


if __name__ == "__main__":
    print(json.dumps([parse(argv) for argv in json.load(sys.stdin)], default=str))
