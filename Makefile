# The two commands a newcomer needs. Both set everything up first (idempotent).
# The browser tests that take the docs' pictures (the `shots` fixture, tests/conftest.py).
SCREENSHOT_TESTS := translate_a_message_and_a_file or translates_both_ways_and_downloads or \
  customer_joins_a_room_from or kiosk_big_buttons or fits_a_phone
.PHONY: up test test-fast setup bench lint lock lock-upgrade lock-check screenshots

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

screenshots: ## refresh docs/screenshots: the browser tests that take them, told to write there
	HYMT_SCREENSHOTS="$(CURDIR)/docs/screenshots" .venv/bin/python -m pytest -p no:cacheprovider \
	  tests/test_browser.py tests/test_phone_layout_browser.py -k "$(SCREENSHOT_TESTS)"

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
