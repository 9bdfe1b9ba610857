# Quick start (fresh machine, Python 3.11 only):
#   make report   # set up .venv, run the market report against the embedded sandbox
#   make test     # set up .venv, run the whole test suite
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup report test test-fast check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,notebooks]'
	touch $(STAMP)

setup: $(STAMP)

report: $(STAMP)
	$(BIN)/realtyframes report market

test: $(STAMP)
	$(BIN)/python -m pytest -n 2

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not slow"

check: $(STAMP)
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
