# The two commands a newcomer needs. Both set everything up first (idempotent).
.PHONY: up test test-fast setup bench

up: ## set up, then run the chat app on the embedded default (or HYMT_BASE_URL)
	@scripts/setup.sh
	.venv/bin/hymt-chat up

test: ## set up (venvs, demo model, chromium), then run every test, real vLLM and browser included
	@scripts/setup.sh --test
	.venv/bin/python -m pytest

test-fast: ## only the tests that need neither vLLM nor a browser
	.venv/bin/python -m pytest -m "not slow"

setup:
	@scripts/setup.sh --test

bench:
	.venv/bin/python benchmarks/overhead.py
