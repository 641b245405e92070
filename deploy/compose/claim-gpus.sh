#!/bin/sh
# Give this vLLM replica GPUs of its own, then run vLLM (compose.yaml's vllm entrypoint).
#
# Docker gives a container that asks for `count: N` GPUs the first N (0 … N-1) whatever other
# containers hold, so `HYMT_REPLICAS=2` would put both replicas on GPU 0. So every replica
# sees all GPUs (`count: all`) and claims HYMT_GPU_COUNT of them here (its tensor × data parallel
# size): group k is GPUs k*COUNT … k*COUNT+COUNT-1, claimed by an flock on
# $HYMT_GPU_CLAIMS/group-k (a volume the replicas share). The lock's descriptor stays open
# across exec, so vLLM holds the claim for its lifetime; the kernel drops it when vLLM exits,
# and a restarted replica claims again. HYMT_GPU_IDS overrides the GPU list (nvidia-smi's).
set -eu
per="${HYMT_GPU_COUNT:-1}"
dir="${HYMT_GPU_CLAIMS:-/run/hymt-gpus}"
ids="${HYMT_GPU_IDS:-$(nvidia-smi --query-gpu=index --format=csv,noheader)}"
case "$per" in
  ''|*[!0-9]*|0) echo "claim-gpus: HYMT_GPU_COUNT must be 1 or more (got '$per')" >&2; exit 2 ;;
esac
mkdir -p "$dir"
group=""
count=0
k=0
for id in $ids; do
  group="${group:+$group,}$id"
  count=$((count + 1))
  [ "$count" -eq "$per" ] || continue
  exec 9>"$dir/group-$k"
  if flock -n 9; then
    echo "claim-gpus: this replica runs on GPU $group (group $k)" >&2
    export CUDA_VISIBLE_DEVICES="$group"
    exec "$@"
  fi
  exec 9>&-
  group=""
  count=0
  k=$((k + 1))
done
echo "claim-gpus: no $per free GPU(s) left among [$(echo $ids)]: more vLLM replicas" \
     "(HYMT_REPLICAS) x HYMT_GPU_COUNT than GPUs on this host" >&2
exit 1
