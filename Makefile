# `make up` runs the farm locally; `make test` runs every check CI runs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: up test lint typecheck pytest clean sandbox-host

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q 'torch==2.13.0'
	$(PY) -m pip install -q -e '.[server,agent,dev]'
	touch $(STAMP)

# bubblewrap and the sandbox account (installs them when run as root on Debian/Ubuntu)
sandbox-host:
	sh deploy/sandbox/setup-host.sh

up: $(STAMP) sandbox-host
	$(PY) -m farm up $(UP_ARGS)

test: $(STAMP) sandbox-host lint typecheck pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy farm agents leaderboard

# First the tests whose wall-clock times or verdicts a busy host changes (marker quiet_host),
# alone. Then the rest on PYTEST_WORKERS processes, whole files each, the files with slow tests
# first (tests/conftest.py). Both parts run; either failing fails the target. Exit 5 (nothing
# selected, as PYTEST_ARGS may make one of the two parts) is not a failure.
PYTEST_WORKERS ?= 3
pytest: $(STAMP)
	@failed=0; \
	$(VENV)/bin/pytest -q -m quiet_host $(PYTEST_ARGS) || [ $$? -eq 5 ] || failed=1; \
	$(VENV)/bin/pytest -q -m 'not quiet_host' -n $(PYTEST_WORKERS) --dist loadfile \
		--no-loadscope-reorder $(PYTEST_ARGS) || [ $$? -eq 5 ] || failed=1; \
	exit $$failed

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
