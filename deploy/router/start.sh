#!/bin/sh
# vllm-router over the vLLM replicas Compose started (compose.yaml's router service).
#
# vllm-router has no DNS discovery: a worker URL is one worker, so http://vllm:8000 (which
# Docker's DNS answers with any replica) would hide the replicas from its health checks, circuit
# breakers and load balancing. Each replica is listed instead by its container name, which
# Compose makes <project>-vllm-<n> (project "hymt-chat", set by compose.yaml's `name:`).
# HYMT_REPLICAS must be the number of vllm replicas (compose.yaml scales vllm by it).
# Then come the flags compose.yaml passes (deploy/router/compose.yaml, generated: the policy,
# health checks, retries and breaker of hymt_chat.sidecar.router.plan_router). hymt-router
# (launch.py) is vllm-router with its key from HYMT_ROUTER_API_KEY, off the command line.
set -eu
n="${HYMT_REPLICAS:-1}"
case "$n" in
  ''|*[!0-9]*|0) echo "hymt-router-start: HYMT_REPLICAS must be a number of replicas, 1 or more (got '$n')" >&2; exit 2 ;;
esac
prefix="${HYMT_VLLM_CONTAINER_PREFIX:-hymt-chat-vllm-}"
port="${HYMT_VLLM_PORT:-8000}"
urls=""
i=1
while [ "$i" -le "$n" ]; do
  urls="$urls http://$prefix$i:$port"
  i=$((i + 1))
done
# shellcheck disable=SC2086 # one word per URL
exec "${HYMT_ROUTER_BINARY:-hymt-router}" --worker-urls $urls "$@"
