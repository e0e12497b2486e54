# Two entry points for a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall whenever pyproject.toml changes.
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# apt-get as root, or through sudo when it needs no password; empty when neither works.
APT := $(shell command -v apt-get >/dev/null && { [ "$$(id -u)" = 0 ] && echo env \
	|| { sudo -n true 2>/dev/null && echo sudo; }; } | sed 's/$$/ DEBIAN_FRONTEND=noninteractive apt-get/')

.PHONY: install model run test lint bench browser voice-tools

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[dev,embedded,voice]'
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)

model: install
	$(BIN)/jarvis model prepare
	$(BIN)/jarvis model prepare --voice

run: install model
	$(BIN)/jarvis chat

lint: install
	$(BIN)/ruff check src tests bench

# The console's browser tests drive Debian's Chromium; where it cannot be installed they
# skip and say why.
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null \
	|| { [ -n "$(APT)" ] && $(APT) update -qq && $(APT) install -y -qq chromium; } \
	|| echo "Chromium is not installed and apt-get cannot install it: the browser tests skip."

# The voice tests speak with espeak-ng as a second voice; a microphone needs PortAudio.
voice-tools:
	@command -v espeak-ng >/dev/null && { ldconfig -p | grep -q libportaudio.so.2; } \
	|| { [ -n "$(APT)" ] && $(APT) update -qq && $(APT) install -y -qq espeak-ng sox libportaudio2; } \
	|| echo "espeak-ng or libportaudio2 is missing and apt-get cannot install them: the tests that need espeak-ng skip."

test: install model lint browser voice-tools
	JARVIS_REQUIRE_MODEL=1 $(BIN)/python -m pytest

bench: install model
	$(BIN)/python bench/center_overhead.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/fast_path.py
	$(BIN)/python bench/mcp_overhead.py
	$(BIN)/python bench/accuracy.py
	$(BIN)/python bench/console_pages.py
	$(BIN)/python bench/voice.py
