# Quick start (fresh machine, Python 3.11 only):
#   make report   # set up .venv (runtime deps only), run the market report on the embedded sandbox
#   make test     # set up .venv with the test extras, run the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
# PySpark lives in its own environment: with PySpark installed, pandera tries PySpark's pandas API
# on every schema it builds (slower validation, a FutureWarning under pandas 3), which is not the
# environment most users run. The `spark` tests (Java 17 needed) run there.
SPARK_VENV ?= .venv-spark
# The MCP Inspector CLI (the TypeScript SDK's client) for the `mcp_clients` tests, pinned by
# tests/mcp_clients/package-lock.json; installed when npm is there (Node 20+; .ci/run installs it).
INSPECTOR := tests/mcp_clients/node_modules/.installed

.PHONY: setup report report-pdf test test-main test-spark test-fast lint check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime install: what the report needs, nothing more (keeps the first command fast; modules are
# byte-compiled on first import instead of all at install time).
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# Development install: runtime + test extras.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test]'
	touch $@ $(VENV)/.installed-run

$(SPARK_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(SPARK_VENV)
	$(SPARK_VENV)/bin/python -m pip install --quiet --no-compile -e '.[test,spark]'
	touch $@

$(INSPECTOR): tests/mcp_clients/package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --prefix tests/mcp_clients --ignore-scripts --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: the mcp_clients tests will say so (install Node 20+ and npm)"; fi

setup: $(VENV)/.installed-test $(SPARK_VENV)/.installed $(INSPECTOR)

report: $(VENV)/.installed-run
	$(BIN)/realtyframes report market

# The report and its PDF: the `pdf` extra (playwright, about 54 MB) drives the system's Chromium
# (Debian: apt-get install chromium); `make report` does not need either.
$(VENV)/.installed-pdf: pyproject.toml | $(VENV)/.installed-run
	$(BIN)/python -m pip install --quiet --no-compile -e '.[pdf]'
	touch $@

report-pdf: $(VENV)/.installed-pdf
	$(BIN)/realtyframes report market --pdf

test: test-main test-spark

test-main: $(VENV)/.installed-test $(INSPECTOR)
	$(BIN)/python -m pytest -n 2 -m "not spark"

test-spark: $(SPARK_VENV)/.installed
	$(SPARK_VENV)/bin/python -m pytest -m spark

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n 2 -m "not slow and not spark"

lint: $(VENV)/.installed-test
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/ruff check src tests benchmarks

check: lint
	$(BIN)/mypy src

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(SPARK_VENV) .pytest_cache .ruff_cache .mypy_cache tests/mcp_clients/node_modules
