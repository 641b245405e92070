#!/usr/bin/env bash
# The suite, as the test command runs it once setup is done: first every test that needs no
# heavy real part, on both cores (pytest-xdist); then the tests of the real parts (vLLM,
# Chromium, Docker, the scale stack: the `slow` marker), those of a real vLLM one after the
# other on one worker while the other takes Chromium's, Docker's and the proxy's (the groups
# in tests/conftest.py). It ends with the budget: the total time and the 20 slowest tests.
# Extra arguments go to both pytest runs (a file, -k, -x ...).
set -uo pipefail
cd "$(dirname "$0")/.."
# The test command passes the time it started, before setup: the budget covers both.
started=${HYMT_TEST_STARTED:-$(date +%s)}
reports=$(mktemp -d)
status=0
.venv/bin/python -m pytest -m "not slow" -n 2 --dist loadfile --junitxml="$reports/parallel.xml" "$@" || status=$?
.venv/bin/python -m pytest -m slow -n 2 --dist loadgroup --junitxml="$reports/real-parts.xml" "$@" \
  || status=$?
.venv/bin/python scripts/test_budget.py "$started" "$reports"/*.xml
rm -rf "$reports"
exit $status
