#!/bin/bash
# On the lent GPU machine, in the checkout's copy (docs/gpu-kit.md says the three calls):
#
#   device.sh stash          carry .gpu/1 (then .gpu/2): keep the part outside the checkout's
#                            copy, which the next call replaces
#   device.sh run [ARGS]     carry .gpu/3: join the parts, check them, unpack; start
#                            benchmarks/gpu.py in its own session (it outlives the call) and
#                            follow it for up to WAIT_S seconds; what it wrote goes to $OUT
#   device.sh wait           no carry: follow the same run again, then collect
#
# ARGS replace the defaults below (LABEL first). The card's own profile is chosen by its name.
set -uo pipefail
STEP=${1:?stash, run or wait}; shift || true
K=/root/kit            # the unpacked kit: site/ (vLLM's side), app/ (the app's), model/
PARTS=/root/kit-parts  # the parts, kept between calls
RES=/root/results      # what gpu.py writes: LABEL.json, the page, its output
WAIT_S=${WAIT_S:-540}
REPO=$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$PARTS" "$RES" "$OUT"

card() { nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1; }

stash() {
  for d in .gpu/*/; do [ -d "$d" ] && cp "$d"* "$PARTS/"; done
  ls -la "$PARTS"
}

unpack() {
  [ -f "$K/.unpacked" ] && return 0
  n=$(cat "$PARTS/PARTS")
  for i in $(seq 0 $((n - 1))); do
    [ -f "$PARTS/kit.tar.xz.part$i" ] || { echo "part $i of $n has not come yet"; return 1; }
  done
  (cd "$PARTS" && cat $(for i in $(seq 0 $((n - 1))); do echo kit.tar.xz.part$i; done) > kit.tar.xz \
    && sha256sum -c SHA256) || return 1
  t0=$SECONDS
  tar -xJf "$PARTS/kit.tar.xz" -C /root || return 1
  printf '#!/bin/sh\n# vLLM runs on its own wheels, not the app'"'"'s\nexport PYTHONPATH=%s/site\nexec python3 "$@"\n' "$K" > "$K/vllm-python"
  chmod +x "$K/vllm-python"
  touch "$K/.unpacked"
  echo "unpacked in $((SECONDS - t0)) s"
}

env_app() {
  export PYTHONPATH=$REPO:$REPO/benchmarks:$K/app:$K/site PYTHONUNBUFFERED=1
  export HYMT_VLLM_PYTHON=$K/vllm-python
  export VLLM_USE_FLASHINFER_SAMPLER=0  # flashinfer is not carried: vLLM's own sampler
  export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
}

follow() {  # the run's output as it comes, until it ends or WAIT_S passes; then collect
  local pid seen=0 t0=$SECONDS
  pid=$(cat "$RES/pid" 2>/dev/null)
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$WAIT_S" ]; do
    sleep 5
    lines=$(wc -l < "$RES/bench.log")
    [ "$lines" -gt "$seen" ] && sed -n "$((seen + 1)),${lines}p" "$RES/bench.log" | cut -c1-400
    seen=$lines
  done
  kill -0 "$pid" 2>/dev/null && echo "still running after ${WAIT_S} s: call 'device.sh wait' next" \
    || echo "finished: $(tail -1 "$RES/bench.log" | cut -c1-200)"
  cp "$RES"/*.json "$RES/gpu.md" "$RES/bench.log" "$OUT/" 2>/dev/null
  for f in /root/bench/*/serve-model.out /root/bench/*/logs/vllm-*.log; do
    [ -f "$f" ] && tail -c 2000000 "$f" > "$OUT/$(basename "$f")"
  done
  nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv
}

case $STEP in
  stash)
    stash
    card; nproc; uptime
    python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name())"
    ;;
  run)
    stash
    unpack || exit 1
    env_app
    python3 -c "import vllm; print('vllm', vllm.__version__)" 2>&1 | tail -1
    case $(card) in *H200*) profile=h200 ;; *H100*) profile=h100 ;; *) profile=h100 ;; esac
    label=${1:-$profile-like-for-like}; shift || true
    args=("$label" --profile "$profile" --model "$K/model/Hunyuan-MT-7B"
          --vllm-args "--load-format dummy" --tests pair --conc 16,64,128 "$@")
    cp "$REPO/docs/results/gpu.md" "$RES/gpu.md"
    echo "python3 benchmarks/gpu.py ${args[*]}"
    setsid python3 benchmarks/gpu.py "${args[@]}" --out "$RES" --page "$RES/gpu.md" \
      --cache /root/bench > "$RES/bench.log" 2>&1 < /dev/null &
    echo $! > "$RES/pid"
    follow
    ;;
  wait)
    env_app
    follow
    ;;
  *) echo "unknown step $STEP"; exit 2 ;;
esac
