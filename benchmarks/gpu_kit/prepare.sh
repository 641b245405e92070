#!/bin/bash
# Offline, on a machine that reaches PyPI (no device time): everything the lent GPU machine
# lacks for benchmarks/gpu.py, packed into three parts that each fit one device call's carry.
#
#   bash benchmarks/gpu_kit/prepare.sh        -> .gpu/1, .gpu/2, .gpu/3 (ignored: /.gpu/ in
#                                               .git/info/exclude), one part and its sums each
#
# The card has Python 3.12 with torch 2.11 but no vLLM: vLLM 0.26.0 (the newest pinned to torch
# 2.11) and the wheels it lacks (vllm-wheels.txt), trimmed of what a Hopper card serving a dense
# BF16 model never loads; the app's own imports (app-wheels.txt); a model folder at
# Hunyuan-MT-7B's shape (model/: its config; the demo model's Qwen2.5 tokenizer, which
# `scripts/setup.sh` downloads; vLLM's `--load-format dummy` makes random weights there).
# A device call carries 64 MiB with the checkout (about 12 MiB), hence three parts.
set -euo pipefail
KIT=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$KIT/../.." && pwd)
DEST=${DEST:-$ROOT/.gpu}
WHEELS=${GPU_KIT_WHEELS:-$HOME/.cache/hymt-chat/gpu-kit}   # downloads kept between runs
TOKDIR=${TOKDIR:-$HOME/.cache/hymt-chat/models/qwen2.5-coder-0.5b-instruct}
PART_MIB=${PART_MIB:-48}
PY=${PYTHON:-python3}
PLAT=(--only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 --abi abi3
      --abi none --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
      --platform manylinux_2_26_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
      --platform manylinux_2_31_x86_64 --platform manylinux_2_5_x86_64
      --platform manylinux1_x86_64 --platform any)
specs() {  # a list's lines as name==version: file names of wheels, or name==version already
  grep -v '^#' "$1" | grep -v '# build' | sed -E '/^\s*$/d; s/^([A-Za-z0-9_.]+)-([0-9][^-]*)-.*\.whl$/\1==\2/'
}
[ -f "$TOKDIR/tokenizer.json" ] || { echo "no tokenizer at $TOKDIR: run scripts/setup.sh"; exit 1; }
mkdir -p "$WHEELS/vllm" "$WHEELS/app"
$PY -m pip download -q --disable-pip-version-check --no-deps "${PLAT[@]}" -d "$WHEELS/vllm" \
  $(specs "$KIT/vllm-wheels.txt")
$PY -m pip download -q --disable-pip-version-check --no-deps "${PLAT[@]}" -d "$WHEELS/app" \
  $(specs "$KIT/app-wheels.txt")
# sdist-only packages (pure Python): a wheel built here serves any Python 3
$PY -m pip wheel -q --disable-pip-version-check --no-deps -w "$WHEELS/app" \
  $(grep '# build' "$KIT/app-wheels.txt" | cut -d' ' -f1)

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/kit/site" "$WORK/kit/app" "$WORK/kit/model"
# vLLM's side: every wheel installed without resolving (the card has the rest), vLLM unzipped
$PY -m pip install -q --disable-pip-version-check --no-deps --no-compile "${PLAT[@]}" \
  --target "$WORK/kit/site" $(ls "$WHEELS"/vllm/*.whl | grep -v '/vllm-0')
$PY -m zipfile -e "$WHEELS"/vllm/vllm-0.26.0-*.whl "$WORK/kit/site"
S=$WORK/kit/site/vllm
rm -f "$S/vllm_flash_attn/_vllm_fa2_C.abi3.so"  # FA2: a Hopper card runs FA3 (FA2 import is optional)
rm -f "$S/vllm-rs"                               # the Rust front end, used only when asked for
rm -rf "$S/third_party/deep_gemm" "$S/third_party/fmha_sm100"  # FP8 GEMM; Blackwell attention
# the app's side, first on the app's path (vLLM keeps the openai its own wheels pinned)
$PY -m pip install -q --disable-pip-version-check --no-deps --no-compile "${PLAT[@]}" \
  --target "$WORK/kit/app" "$WHEELS"/app/*.whl
rm -rf "$WORK/kit/site/bin" "$WORK/kit/app/bin"
find "$WORK/kit" -name __pycache__ -prune -exec rm -rf {} +
# the model folder: named as the model, so the app picks Hunyuan-MT's prompts
M=$WORK/kit/model/Hunyuan-MT-7B
mkdir -p "$M"
cp "$KIT/model/config.json" "$KIT/model/generation_config.json" "$M/"
cp "$TOKDIR/tokenizer.json" "$TOKDIR/tokenizer_config.json" "$M/"
[ -f "$TOKDIR/chat_template.jinja" ] && cp "$TOKDIR/chat_template.jinja" "$M/"

tar -cf - -C "$WORK" kit | xz -9 -T0 > "$WORK/kit.tar.xz"
rm -rf "$DEST" && mkdir -p "$DEST"
split -b "${PART_MIB}M" -d -a 1 "$WORK/kit.tar.xz" "$WORK/part"
n=$(ls "$WORK"/part* | wc -l)
[ "$n" -le 3 ] || { echo "the kit is $n parts of $PART_MIB MiB: more than three calls"; exit 1; }
SUM=$(sha256sum "$WORK/kit.tar.xz" | cut -d' ' -f1)
for i in $(seq 1 "$n"); do
  mkdir -p "$DEST/$i"
  mv "$WORK/part$((i - 1))" "$DEST/$i/kit.tar.xz.part$((i - 1))"
  echo "$SUM  kit.tar.xz" > "$DEST/$i/SHA256"
  echo "$n" > "$DEST/$i/PARTS"
done
du -sh "$DEST"/*
echo "kit.tar.xz: $(du -h "$WORK/kit.tar.xz" | cut -f1), sha256 $SUM, $n parts"
