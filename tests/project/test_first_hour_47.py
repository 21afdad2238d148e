"""A new user's first hour, issue 47: a Python without the project's packages gets one line naming the venv (item 6),
and the small stumbles of item 7."""
from __future__ import annotations

import subprocess
import sys

import pytest

from common import ROOT

#: every program a user starts from a clone, as typed after ``python``
ENTRIES = [
    ["train.py", "--config", "default"],
    ["evaluate.py", "--a", "rule", "--b", "random"],
    ["demo.py"],
    ["-m", "agents.play"],
    ["-m", "agents.play.web"],
    ["-m", "agents.cli.train", "--config", "default"],
    ["-m", "agents.cli.evaluate", "--a", "rule", "--b", "random"],
    ["-m", "agents.cli.calibrate"],
    ["-m", "agents.dmc.export"],
]


@pytest.mark.parametrize("args", ENTRIES, ids=lambda a: " ".join(a[:2]))
def test_a_python_without_the_packages_gets_one_line_naming_the_venv(args):
    """``-S`` leaves site-packages (numpy, gymnasium, torch, the editable install) off the path: the bare
    interpreter of a system ``python3``; ``-E -s``: no PYTHONPATH, no user site."""
    p = subprocess.run([sys.executable, "-S", "-E", "-s", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "error:" in lines[0] and "is not installed" in lines[0], lines
    assert any(s in lines[0] for s in (".venv/bin/python", "make setup", "pip install")), lines


def test_the_missing_line_names_the_clones_venv_or_make_setup(tmp_path, monkeypatch):
    from agents import _entry

    monkeypatch.setattr(_entry, "ROOT", tmp_path)
    (tmp_path / "Makefile").write_text("")
    monkeypatch.chdir(tmp_path)
    line = _entry.missing_line("train.py", ["train.py", "--config", "default"], "torch")  # a Python with numpy
    assert line.endswith("install the 'train' extra: pip install -e \".[train]\""), line  # (not on PyPI)
    monkeypatch.setattr(_entry, "_has_core", lambda: False)  # the system python3: nothing of the project's
    line = _entry.missing_line("train.py", ["train.py", "--config", "default"], "numpy")
    assert line.startswith("train.py: error: numpy is not installed") and "make setup" in line, line
    assert ".venv/bin/python train.py --config default" in line and line.endswith("(or pip install -e .)"), line
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    line = _entry.missing_line("train.py", ["train.py", "--config", "default"], "numpy")
    assert line.endswith("run it with the project's venv: .venv/bin/python train.py --config default"), line
    (tmp_path / "Makefile").unlink()  # an installed package, not a clone: the extra's requirements (not on PyPI)
    line = _entry.missing_line("ddz-web", ["-m", "agents.play.web"], "fastapi")
    if _entry._installed():
        assert "install the 'web' extra: pip install 'fastapi>=" in line and " 'uvicorn>=" in line, line
    else:
        assert line.endswith("install the 'web' extra: pip install -e \".[web]\" in a clone of the repository "
                             "(ddz-env is not on PyPI)"), line


def test_a_missing_package_of_the_project_itself_is_not_hidden():
    from agents._entry import needs_installed

    with pytest.raises(ModuleNotFoundError):
        with needs_installed("x"):
            import agents.no_such_module  # noqa: F401
    with pytest.raises(ModuleNotFoundError):  # a module imported by another program: its error goes up
        with needs_installed("x", active=False):
            import no_such_package_zz  # noqa: F401


def test_a_busy_port_is_one_line_suggesting_another_port_before_any_address():
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = subprocess.run([sys.executable, "-m", "agents.play.web", "--port", str(port), "--no-save"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and f"port {port} is in use" in lines[0], p.stderr
    assert "--port" in lines[0] and "http://" not in p.stdout, (p.stdout, p.stderr)


def test_the_hands_people_play_are_ignored_by_git():
    """ddz-play and the web page keep each hand in hands/ (their default --save-dir), beside runs/."""
    p = subprocess.run(["git", "check-ignore", "hands/hand-0001.json", "runs/x/log.csv", "agents/play/match.py"],
                       cwd=ROOT, capture_output=True, text=True)
    if p.returncode == 128:
        pytest.skip(f"not a git checkout: {p.stderr.strip()}")
    assert p.stdout.split() == ["hands/hand-0001.json", "runs/x/log.csv"], (p.stdout, p.stderr)


def test_an_evaluation_log_line_gives_the_interval_in_the_scores_3_signed_decimals(tmp_path, caplog):
    pytest.importorskip("torch")
    import logging
    from types import SimpleNamespace

    from agents.dmc.learner.periodic_eval import EVAL_FIELDS, TrainingEvaluator

    row = {k: "" for k in EVAL_FIELDS}
    row.update(frames=400000, opponent="rule", mode="duplicate", score=-1.15, ci_lo=-3.05275, ci_hi=0.75275)
    with caplog.at_level(logging.INFO, logger="dmc"):
        TrainingEvaluator._write(SimpleNamespace(path=tmp_path / "eval.csv", tb=None), [row])
    assert caplog.messages[-1] == "eval at 400000 frames vs rule (duplicate): -1.150 [-3.053, +0.753] per hand"


def test_a_run_says_once_that_tensorboard_is_missing_and_leaves_no_empty_eval_pending(tmp_path, caplog, monkeypatch):
    """``make demo`` said "tensorboard is not installed" twice (the training log's view and the evaluator's) and left
    an empty ``eval_pending/`` in the run folder."""
    pytest.importorskip("torch")
    import logging
    from types import SimpleNamespace

    from agents.dmc.learner.periodic_eval import TrainingEvaluator
    from agents.runs.log import summary_writer

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # (an import of it raises ImportError)
    log = logging.getLogger("dmc")
    with caplog.at_level(logging.INFO, logger="dmc"):
        assert summary_writer(tmp_path / "tensorboard", log) is None
        assert summary_writer(tmp_path / "tensorboard", log) is None
    assert sum("tensorboard is not installed" in m for m in caplog.messages) == 1, caplog.messages

    pending = tmp_path / "eval_pending"
    pending.mkdir()
    ev = SimpleNamespace(pending=[], pool=None, tb=None, pending_dir=pending, poll=lambda wait: [])
    TrainingEvaluator.close(ev)
    assert not pending.exists()
    pending.mkdir()
    (pending / "000000400000.pt").write_bytes(b"")  # weights a resume evaluates: kept
    TrainingEvaluator.close(ev)
    assert (pending / "000000400000.pt").exists()


def test_the_paths_the_configs_name_exist():
    """configs/default.yaml pointed to agents/dmc/results/, which moved to benchmarks/results/dmc/."""
    import re

    named = {}
    for cfg in sorted((ROOT / "configs").glob("*.yaml")):
        for path in re.findall(r"\b((?:agents|benchmarks|configs|docs|examples|tests)/[\w./-]*\w/?)", cfg.read_text()):
            named[path] = cfg.name
    assert named, "no path named in configs/ (the pattern is wrong)"
    missing = {p: c for p, c in named.items() if not (ROOT / p).exists()}
    assert not missing, missing


def test_train_and_evaluate_start_their_errors_with_the_script_name():
    p = subprocess.run([sys.executable, "evaluate.py", "--a", "rulle", "--b", "random"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.startswith("evaluate.py: error: unknown agent 'rulle'"), p.stderr
    pytest.importorskip("yaml")
    p = subprocess.run([sys.executable, "train.py", "--config", "smok"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and p.stderr.startswith("train.py: error: unknown config 'smok'"), p.stderr
    from agents._entry import command_line

    assert command_line("evaluate.py", ["--a", "rule"]) == "python evaluate.py --a rule"  # (--out's "command")
    assert command_line("ddz-evaluate", ["--a", "x y"]) == "ddz-evaluate --a 'x y'"


def test_an_unknown_agent_lists_every_form_of_spec():
    from agents import load
    from agents.loader import _SCHEMES

    with pytest.raises(ValueError) as e:
        load("rulle")
    text = str(e.value)
    assert "did you mean 'rule'?" in text and "pretrained, random, rule" in text, text
    for scheme in _SCHEMES:
        assert f"{scheme}:" in text, (scheme, text)


def test_demo_prints_ten_as_10_like_the_rest_of_the_project():
    p = subprocess.run([sys.executable, "demo.py", "--hands", "3", "--spectator"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    import re

    assert " 10" in p.stdout and not re.search(r"(?<![\w-])[TBR](?![\w-])", p.stdout), p.stdout
    cards = [line.split(": ", 1)[1] for line in p.stdout.splitlines() if re.match(r"   (seat \d|bottom|PLAY )", line)]
    assert cards and not any(re.search(r"\d[TJQKA2]|T\d|[JQKA]{2}", c) for c in cards), cards  # spaced: never 9TJ


def test_the_demo_evaluates_its_untrained_weights_and_says_how_far_it_got():
    """Item 1: the demo's curve starts at the untrained weights and has a point every 100k frames, and
    ``make demo`` points at the printed evaluation lines and what an hour of ``default`` reaches."""
    from agents.dmc.config import load_config

    cfg = load_config("demo")
    assert cfg.eval_at_start and cfg.eval_every and cfg.total_frames // cfg.eval_every >= 4
    assert "rule" in cfg.eval_opponents and "random" in cfg.eval_opponents and cfg.eval_deals >= 100
    demo = (ROOT / "Makefile").read_text().split("\ndemo:")[1].split("\n\n")[0]
    assert "'evaluations' lines" in demo and "--config default" in demo and "against rule" in demo
