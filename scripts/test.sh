#!/usr/bin/env bash
# The suite, as the test command runs it once setup is done: first every test that needs no
# heavy real part, on both cores (pytest-xdist, a file to a worker); then the tests of the real
# parts (vLLM, Chromium, Docker, the scale stack: the `slow` marker) in two processes side by
# side: the ones that hold real vLLM servers for long (the `vllm` marker: the demo server, the
# scaled-out stack) one after the other, and the rest (Chromium, Docker, the launcher's own
# servers). It ends with the budget: the total time and the 20 slowest tests.
# Extra arguments go to every pytest run (a file, -k, -x ...).
set -uo pipefail
cd "$(dirname "$0")/.."
# The test command passes the time it started, before setup: the budget covers both.
started=${HYMT_TEST_STARTED:-$(date +%s)}
reports=$(mktemp -d)
status=0
.venv/bin/python -m pytest -m "not slow" -n 2 --dist loadfile --junitxml="$reports/parallel.xml" "$@" || status=$?
# The vLLM half writes to a log of its own, shown when both are done: two live outputs would mix.
vllm_log="$reports/vllm.log"
# Each its own temporary folder: neither cleans up the other's.
.venv/bin/python -m pytest -m "slow and vllm" --basetemp="$reports/tmp-vllm" \
  --junitxml="$reports/vllm.xml" "$@" > "$vllm_log" 2>&1 &
vllm_pid=$!
.venv/bin/python -m pytest -m "slow and not vllm" --basetemp="$reports/tmp-rest" \
  --junitxml="$reports/real-parts.xml" "$@" || status=$?
wait "$vllm_pid" || status=$?
cat "$vllm_log"
.venv/bin/python scripts/test_budget.py "$started" "$reports"/*.xml
rm -rf "$reports"
exit $status
