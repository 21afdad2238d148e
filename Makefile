# Set-up and the two jobs README.md opens with. Works on a fresh machine with python3 >= 3.10.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo play test bench

setup: $(VENV)/.installed

# torch==2.13.0 first: on these machines it is a local CPU build (an unpinned torch pulls CUDA, GBs)
$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

# the main job on a small default: a short DMC training run (configs/smoke.yaml, about a minute
# on CPU), then its checkpoint against the random and the rule agent in duplicate deals
demo: setup
	$(BIN)/python train.py --config configs/smoke.yaml --run-dir runs/demo --no-progress
	$(BIN)/python evaluate.py --a runs/demo/checkpoint.pt --b random --deals 100 --seed 0
	$(BIN)/python evaluate.py --a runs/demo/checkpoint.pt --b rule --deals 100 --seed 0

# deal and print three seeded hands of random play
play: setup
	$(BIN)/python demo.py --hands 3 --seed 0

test: setup
	$(BIN)/python -m pytest tests

# the peers (RLCard, OpenSpiel, DouZero) are optional: installed here, skipped by the scripts when absent
bench: setup
	$(BIN)/pip install -q -e ".[dev,bench]"
	$(BIN)/python benchmarks/bench_legal.py
	$(BIN)/python benchmarks/bench_env.py
	$(BIN)/python benchmarks/bench_speed.py
