"""Parse a vllm-router command line with vllm-router's own parser and print what it read.

Run by the sidecar's Python (.venv-vllm, where vllm-router lives):
``python tests/support/router_args.py --worker-urls … --policy …`` prints the launcher's
``RouterArgs`` as JSON after its own validation, or exits 2 with the parser's complaint. The
tests compare the deployed routers' flags with plan_router's through it, without a cluster.
"""

from __future__ import annotations

import dataclasses
import json
import sys

from vllm_router.launch_router import parse_router_args


def main(argv: list[str]) -> int:
    args = parse_router_args(argv)  # argparse exits 2 on an unknown flag or a bad value
    args._validate_router_args()  # what launch_router checks before starting the Rust router
    print(json.dumps(dataclasses.asdict(args), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
