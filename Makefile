# Set-up and the two jobs README.md opens with. Works on a fresh machine with python3 >= 3.10.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RLLIB_VENV ?= .venv-rllib
RBIN := $(RLLIB_VENV)/bin
# every install is constrained to the CPU torch build (an unpinned torch pulls CUDA, GBs)
PIP_C := pip install -q -c constraints-cpu.txt
# where torch comes from, TORCH=cpu (the default) or TORCH=cuda:
#   cpu:  a CPU build the machine's own package sources hold (pip --no-index: its find-links; then
#         torch's small dependencies from PyPI), else PyTorch's CPU wheel index (about 200 MB of
#         downloads; PyPI's Linux torch is the CUDA build)
#   cuda: PyPI's build with CUDA (several GB), for a machine with an NVIDIA GPU: make setup TORCH=cuda
#   TORCH_INDEX=URL: that index instead (a mirror)
TORCH ?= cpu
TORCH_INDEX ?=
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
install_torch = if [ -n "$(TORCH_INDEX)" ]; then $(1)/$(PIP_C) --index-url $(TORCH_INDEX) torch==2.13.0; \
	elif [ "$(TORCH)" = cuda ]; then $(1)/$(PIP_C) torch==2.13.0; \
	elif $(1)/pip install -q --no-index --no-deps -c constraints-cpu.txt torch==2.13.0 2>/dev/null; \
	then $(1)/$(PIP_C) torch==2.13.0; \
	else $(1)/$(PIP_C) --index-url $(TORCH_CPU_INDEX) torch==2.13.0; fi
# setuptools notes on every editable install of a package beside other folders ("Editable installation ...
# Please be careful with folders in your working directory with the same name as your package"), and pip >= 25
# shows the notes of a build as a BuildBackendWarning box: an information, not a problem, kept out of make's
# output (the filter takes only that note; tests/project/test_packaging.py checks the build warns nothing else)
NO_EDITABLE_NOTICE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: setup setup-marl setup-rllib demo play test test-core bench dist

setup: $(VENV)/.installed

# torch==2.13.0 first (on these machines a local CPU build), then the package with the trainer
# and the test tools (extras train, dev; see docs/install.md)
$(VENV)/.installed: pyproject.toml constraints-cpu.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(call install_torch,$(BIN))
	$(NO_EDITABLE_NOTICE) $(BIN)/$(PIP_C) -e ".[dev,train,web]"
	touch $@

# Tianshou, TorchRL, SB3 for the integration tests; MkDocs for the docs build (tests/project/test_docs.py); DouZero (tests/learning/test_douzero.py compares with its
# engine, features and networks; a few MB over the torch already there); onnx and onnxruntime (tests/integrations/test_onnx.py);
# Pillow for the pictures of the table (tests/core/test_render.py)
setup-marl: $(VENV)/.installed-marl
$(VENV)/.installed-marl: $(VENV)/.installed
	$(NO_EDITABLE_NOTICE) $(BIN)/$(PIP_C) -e ".[dev,train,web,marl,douzero,docs,onnx,render]"
	touch $@

# RLlib and the Ray training backend (ray pins an older gymnasium): their own venv
setup-rllib: $(RLLIB_VENV)/.installed
$(RLLIB_VENV)/.installed: pyproject.toml constraints-cpu.txt
	$(PY) -m venv $(RLLIB_VENV)
	$(RBIN)/pip install -q --upgrade pip
	$(call install_torch,$(RBIN))
	$(NO_EDITABLE_NOTICE) $(RBIN)/$(PIP_C) -e ".[dev,train,rllib]"
	touch $@

# the main job on a small default: a short DMC training run (the shipped config "demo",
# configs/demo.yaml: smoke's size with the default's choices, about 2.5 minutes on CPU, with a small evaluation at 200k and 400k
# frames for the learning curve), then its checkpoint (the run folder) against the random and the
# rule agent in duplicate deals, the shipped pretrained agent against the rule agent for scale,
# and what to try next
demo: setup
	@if [ -d runs/demo ]; then echo "--- runs/demo holds the previous demo: moved to runs/demo.old (a fresh run now)"; \
	  rm -rf runs/demo.old; mv runs/demo runs/demo.old; fi
	$(BIN)/python train.py --config demo --run-dir runs/demo --no-progress
	$(BIN)/python evaluate.py --a runs/demo --b random --deals 100 --seed 0 --no-progress
	$(BIN)/python evaluate.py --a runs/demo --b rule --deals 100 --seed 0 --no-progress
	@echo "--- for scale: the shipped agent (agents/pretrained/dmc.pt, 72M frames) against the rule agent"
	$(BIN)/python evaluate.py --a pretrained --b rule --deals 100 --seed 0 --no-progress
	@echo "--- how far it got: the 'evaluations' lines after 'done' above (untrained, then every 100k frames;"
	@echo "  runs/demo/learning_curve.png draws them). An hour of train.py --config default (about 20M frames"
	@echo "  on 2 cores) reaches about +0.6 a hand against rule; the shipped agent is the line just above"
	@echo "--- next: runs/demo/learning_curve.png shows the run's curves; then"
	@echo "  make play                                            # play a hand against rule and pretrained"
	@echo "  $(BIN)/python train.py --config default              # a useful run: about an hour on 2 cores"
	@echo "  $(BIN)/python -m agents.cli.compare runs/demo runs/default-*/ --out compare.png   # compare runs"
	@echo "  $(BIN)/python evaluate.py --league random rule pretrained runs/demo --deals 200  # rate agents"

# play a hand in the terminal against the rule agent and the shipped pretrained agent
play: setup
	$(BIN)/python -m agents.play --vs rule,pretrained

# the lint (ruff: pyproject's [tool.ruff], each ignored rule with its reason), then the whole suite,
# the integration tests with the real libraries included (RLlib and the Ray
# training backend in the Ray venv)
# Every step runs even when one before it failed; the target fails at the end, naming the steps that did.
test: setup-marl setup-rllib
	@failed=""; \
	$(BIN)/ruff check . || failed="$$failed ruff"; \
	$(BIN)/python -m pytest tests -m "not rllib" || failed="$$failed main-suite"; \
	$(RBIN)/python -m pytest tests -m rllib --ignore=tests/learning/test_ray.py || failed="$$failed rllib-suite"; \
	$(RBIN)/python -m pytest tests/learning/test_ray.py || failed="$$failed ray-suite"; \
	if [ -n "$$failed" ]; then echo "make test: failed:$$failed"; exit 1; fi; echo "make test: every suite passed"

# the suite without the MARL libraries (their integration tests skip)
test-core: setup
	@failed=""; \
	$(BIN)/ruff check . || failed="$$failed ruff"; \
	$(BIN)/python -m pytest tests -m "not rllib" || failed="$$failed main-suite"; \
	if [ -n "$$failed" ]; then echo "make test-core: failed:$$failed"; exit 1; fi

# the peers (RLCard, OpenSpiel, DouZero) are optional: installed here, skipped by the scripts when absent
bench: setup
	$(NO_EDITABLE_NOTICE) $(BIN)/pip install -q -e ".[dev,train,bench]"
	$(BIN)/python benchmarks/bench_legal.py
	$(BIN)/python benchmarks/bench_env.py
	$(BIN)/python benchmarks/bench_speed.py

# the sdist and the wheel in dist/ (python -m build: the wheel is built from the sdist), then twine's check of
# both; the wheel installs anywhere: pip install -c constraints-cpu.txt "dist/ddz_env-0.1.0-py3-none-any.whl[train]"
# (docs/install.md)
dist: setup
	rm -f dist/ddz_env-*
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python -m twine check --strict dist/ddz_env-*
