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

pytest: $(STAMP)
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
