# The two commands a newcomer needs. Both set everything up first (idempotent).
.PHONY: up test test-fast setup bench lint lock lock-upgrade lock-check

up: ## set up, then run the chat app on the embedded default (or HYMT_BASE_URL)
	@scripts/setup.sh
	.venv/bin/hymt-chat up

test: ## set up (venvs, demo model, chromium), then run every test, real vLLM and browser included
	@export HYMT_TEST_STARTED=$$(date +%s) && scripts/setup.sh --test && scripts/test.sh

test-fast: ## only the tests that need no heavy real part (vLLM, browser, Docker), on both cores
	.venv/bin/python -m pytest -m "not slow" -n 2 --dist loadfile

setup:
	@scripts/setup.sh --test

bench:
	.venv/bin/python benchmarks/overhead.py

lint: ## the quality gates the test command runs too (tests/test_quality_gates.py)
	.venv/bin/ruff check .
	.venv/bin/mypy

lock: ## refresh the locks after changing pyproject.toml or requirements/*.in (keeps other pins)
	scripts/lock.sh

lock-upgrade: ## take the newest releases every lock's inputs allow
	scripts/lock.sh --upgrade

lock-check: ## each lock is what its inputs give, and both environments hold exactly their lock
	scripts/lock.sh --check
	.venv/bin/python -m pytest -q -p no:cacheprovider tests/test_locks.py
