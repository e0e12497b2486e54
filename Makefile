# Two entry points for a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall whenever pyproject.toml changes.
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

.PHONY: install model run test lint bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[dev,embedded]'
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)

model: install
	$(BIN)/jarvis model prepare

run: install model
	$(BIN)/jarvis chat

lint: install
	$(BIN)/ruff check src tests bench

test: install model lint
	JARVIS_REQUIRE_MODEL=1 $(BIN)/python -m pytest

bench: install model
	$(BIN)/python bench/center_overhead.py
	$(BIN)/python bench/fast_path.py
	$(BIN)/python bench/mcp_overhead.py
	$(BIN)/python bench/accuracy.py
