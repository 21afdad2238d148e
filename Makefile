# Set-up and the two jobs README.md opens with. Works on a fresh machine with python3 >= 3.10.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench

setup: $(VENV)/.installed

# torch==2.13.0 first: on these machines it is a local CPU build (an unpinned torch pulls CUDA, GBs)
$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

demo: setup
	$(BIN)/python demo.py --hands 3 --seed 0

test: setup
	$(BIN)/python -m pytest tests

# the peers (RLCard, OpenSpiel, DouZero) are optional: installed here, skipped by the scripts when absent
bench: setup
	$(BIN)/pip install -q -e ".[dev,bench]"
	$(BIN)/python benchmarks/bench_legal.py
	$(BIN)/python benchmarks/bench_env.py
	$(BIN)/python benchmarks/bench_speed.py
