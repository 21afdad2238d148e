"""One contract for every library learner (agents/runs/algos.py's table): ``train(seconds, run_dir,
decisions=...)`` trains to a budget that spans its resumes (here decisions, with no time limit: a test stops on
work done, which holds on a busy machine as on a quiet one), writes ``state.json`` and the ``policy.pt`` that ``agents.load``
seats, continues on ``resume``, trains nothing once its budget is spent, refuses an unknown option and a bad
value before anything starts, and ``train.py --config NAME`` runs it in a run folder with ``eval.csv`` and a
learning curve. A learner whose library is not installed here is skipped by name (RLlib runs in its own
venv: its cases are marked ``rllib``, which ``make test`` runs there)."""
from __future__ import annotations

import csv
import importlib
import json

import numpy as np
import pytest

from agents.runs.algos import ALGOS, REQUIRES
from agents.runs.algos import LEARNERS as RECORDS

pytestmark = pytest.mark.integration

#: each learner's options for a short run on a small network (its record's)
SMALL = {name: dict(r.small) for name, r in RECORDS.items() if name != "dmc"}
LEARNERS = [pytest.param(a, marks=pytest.mark.rllib) if a == "rllib" else a for a in ALGOS if a != "dmc"]


def learner(name):
    for module in REQUIRES.get(name, ((), ""))[0]:
        pytest.importorskip(module, reason=f"learner {name!r} needs {module}")
    return importlib.import_module(ALGOS[name][0])


def small_run(name: str, *keys: str) -> list[str]:
    """``--set`` arguments of a short run of ``name`` on decisions (no time limit), its small options and
    ``keys``, evaluated on one deal against random."""
    sets = [s for k in ("max_seconds=0", *keys, "eval_deals=1", "eval_opponents=[random]") for s in ("--set", k)]
    return sets + [s for k, v in SMALL[name].items() for s in ("--set", f"options.{k}={json.dumps(v)}")]


def test_every_library_learner_has_its_small_options():
    assert set(SMALL) == {a for a in ALGOS if a != "dmc"} and all(SMALL.values())


@pytest.mark.parametrize("name", LEARNERS)
def test_every_option_of_a_learner_has_its_check(name):
    """An option cannot exist without its check: each learner's options are in CHECKS, and an option that is
    not is refused at the first use of the learner's checks."""
    import subprocess
    import sys

    from agents.integrations.options import CHECKS, HELP, RENAMED, check_options
    from common import ROOT

    mod = learner(name)
    assert set(mod.DEFAULTS) <= set(CHECKS) & set(HELP), sorted(set(mod.DEFAULTS) - set(CHECKS) & set(HELP))
    assert set(HELP) == set(CHECKS) - set(RENAMED) - {"n_steps"}  # (old names: their new name's help; SB3's
    # n_steps is decisions_per_batch / num_envs)
    with pytest.raises(TypeError, match="option 'new_knob' has no check"):
        check_options(name, {}, {**mod.DEFAULTS, "new_knob": 1}, load_specs=False)
    # train.py --config NAME --help lists the learner's options, each with its default and help
    out = subprocess.run([sys.executable, "train.py", "--config", name, "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300).stdout
    listed = out.split(f"{name}'s options (--set options.NAME=VALUE):", 1)[1]
    for k in mod.DEFAULTS:
        assert f"options.{k} " in listed and HELP[k] in listed, k


@pytest.mark.parametrize("name", LEARNERS)
def test_train_resumes_exports_and_stops_at_its_budget(name, tmp_path, capsys):
    import torch

    import agents
    from agents.evaluation.protocols import evaluate

    mod = learner(name)
    run = tmp_path / "run"
    opts = {**SMALL[name], "progress_seconds": 1e-9}  # (a progress line after every update)
    inf = float("inf")
    first = mod.train(inf, run, decisions=300, seed=1, progress=True, **opts)
    assert first["steps"] >= 300 and first["wall_seconds"] > 0 and first["cpu_seconds"] > 0
    assert json.loads((run / "state.json").read_text())["steps"] == first["steps"]
    out = capsys.readouterr().out  # the same words for every learner (agents/runs/session.py)
    assert f"{name}: " in out and "of 300 decisions learned" in out and "decisions/s, ETA " in out and "trained to" in out
    weights = {k: v.clone() for k, v in agents.load(str(run / "policy.pt")).policy.state_dict().items()}
    opts["progress_seconds"] = 1e9
    budget = first["steps"] + 300
    second = mod.train(inf, run, decisions=budget, seed=1, resume=True, progress=False, **opts)
    assert second["steps"] >= budget and second["wall_seconds"] > first["wall_seconds"]
    spent = mod.train(inf, run, decisions=budget, seed=1, resume=True, progress=False, **opts)
    assert spent["steps"] == second["steps"]  # the budget is spent: nothing more
    # the time budget too: one already spent (below what the run has trained) trains nothing
    assert mod.train(second["wall_seconds"] / 2, run, seed=1, resume=True, progress=False,
                     **opts)["steps"] == second["steps"]
    agent = agents.load(str(run / "policy.pt"))
    assert type(agent).__name__ == "MoveScoringAgent" and agent.name == f"movescore:{name}"
    assert agent.steps == second["steps"]
    assert any(not torch.equal(v, weights[k]) for k, v in agent.policy.state_dict().items())  # trained on
    assert evaluate(agent, "random", deals=1, seed=0)["hands"] == 6


@pytest.mark.parametrize("name", LEARNERS)
def test_unknown_options_and_bad_values_are_refused_before_anything_starts(name, tmp_path):
    mod = learner(name)
    with pytest.raises(ValueError, match="unknown option 'nosuch'"):
        mod.train(1, tmp_path / "a", nosuch=1)
    with pytest.raises(ValueError, match="option 'learning_rate' must be"):
        mod.train(1, tmp_path / "b", learning_rate=-1.0)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("name", LEARNERS)
def test_train_py_runs_the_shipped_config_in_a_run_folder(name, tmp_path):
    import agents
    import train as cli
    from agents.evaluation.metrics import EVAL_FIELDS

    learner(name)
    run = tmp_path / "run"
    sets = ["--set", "max_seconds=0", "--set", "max_decisions=300", "--set", "eval_deals=2",
            "--set", "eval_opponents=[random]"]
    for k, v in SMALL[name].items():
        sets += ["--set", f"options.{k}={json.dumps(v)}"]
    assert cli.main(["--config", name, "--run-dir", str(run), "--no-progress", *sets]) == 0
    rows = list(csv.DictReader(open(run / "eval.csv")))
    assert rows and tuple(rows[0]) == EVAL_FIELDS and rows[-1]["opponent"] == "random"
    assert np.isfinite(float(rows[-1]["score"]))
    assert {"config.yaml", "log.csv", "policy.pt", "state.json", "learning_curve.png"} <= {p.name for p in run.iterdir()}
    assert type(agents.load(str(run))).__name__ == "MoveScoringAgent"
    steps = int(rows[-1]["frames"])
    assert steps >= 300
    # it goes on: 300 decisions past what the learner has learned (a decisions budget: the same on any machine)
    assert cli.main(["--resume", str(run), "--no-progress", "--set", f"max_decisions={steps + 300}"]) == 0
    assert int(list(csv.DictReader(open(run / "eval.csv")))[-1]["frames"]) >= steps + 300


@pytest.mark.parametrize("name", LEARNERS)
def test_a_run_evaluates_on_its_cadence_inside_one_training_call(name, tmp_path, monkeypatch):
    """One ``train`` call a run, however many evaluations (before, each evaluation ended a segment and the next
    started the learner again: RLlib's Ray about 20 s each time); RLlib's Ray starts once."""
    import train as cli

    mod = learner(name)
    calls, inits = [], []
    real = mod.train

    def counted(*args, **kwargs):
        calls.append(kwargs.get("cadence"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "train", counted)
    if name == "rllib":
        import ray

        init = ray.init
        monkeypatch.setattr(ray, "init", lambda *a, **k: inits.append(1) or init(*a, **k))
    run = tmp_path / "run"
    assert cli.main(["--config", name, "--run-dir", str(run), "--no-progress",
                     *small_run(name, "max_decisions=900", "eval_every_decisions=300")]) == 0
    frames = [int(r["frames"]) for r in csv.DictReader(open(run / "eval.csv"))]
    assert len(calls) == 1 and calls[0] is not None
    # (at least one evaluation inside the call, the run's end one after it; a batch can cross two points)
    assert len(frames) >= 2 and frames == sorted(set(frames)) and 300 <= frames[0] < 900 <= frames[-1], frames
    assert inits == ([1] if name == "rllib" else [])


@pytest.mark.parametrize("name", LEARNERS)
def test_eval_at_start_evaluates_the_untrained_policy_first(name, tmp_path):
    """``eval_at_start``: eval.csv's first row is the untrained policy's (0 decisions), as DMC's; a resume does
    not evaluate it again."""
    import train as cli

    learner(name)
    run = tmp_path / "run"
    assert cli.main(["--config", name, "--run-dir", str(run), "--no-progress",
                     *small_run(name, "max_decisions=200", "eval_at_start=true")]) == 0
    frames = [int(r["frames"]) for r in csv.DictReader(open(run / "eval.csv"))]
    assert frames[0] == 0 and frames[-1] >= 200 and len(frames) == 2, frames
    assert int(next(csv.DictReader(open(run / "log.csv")))["steps"]) == 0
    assert cli.main(["--resume", str(run), "--no-progress", "--set", "max_decisions=400"]) == 0
    again = [int(r["frames"]) for r in csv.DictReader(open(run / "eval.csv"))]
    assert again[:2] == frames and again.count(0) == 1 and again[-1] >= 400, again


#: each learner's options in the names it took before one name per idea (still taken this release)
OLD_NAMES = {
    "sb3": {"n_envs": 2, "n_steps": 16, "batch_size": 32, "n_epochs": 1, "ent_coef": 0.02},
    "tianshou": {"steps_per_collect": 64, "batch_size": 64, "repeat": 1, "eps_clip": 0.3, "ent_coef": 0.02},
    "rllib": {"batch": 256},
}


@pytest.mark.parametrize("name", [pytest.param(a, marks=pytest.mark.rllib) if a == "rllib" else a
                                  for a in OLD_NAMES])
def test_an_ideas_old_option_name_still_works_with_a_one_line_deprecation(name, caplog):
    """One name per idea across learners (the batch geometry, the entropy bonus, the clip); a shipped config's
    old key keeps working one release, each with a one-line deprecation naming the new key."""
    import logging

    mod = learner(name)
    with caplog.at_level(logging.WARNING, logger="ddz.train"):
        o = mod.check_options(dict(OLD_NAMES[name]))
    renamed = {"n_envs": "num_envs", "steps_per_collect": "decisions_per_batch", "batch": "decisions_per_batch",
               "batch_size": "minibatch", "n_epochs": "epochs", "repeat": "epochs", "ent_coef": "entropy_coeff",
               "eps_clip": "clip_epsilon", "n_steps": "decisions_per_batch"}
    for old, value in OLD_NAMES[name].items():
        assert old not in o
        assert f"option {old!r} is now {renamed[old]!r}" in caplog.text, caplog.text
        if old != "n_steps":
            assert o[renamed[old]] == value
    if name == "sb3":
        assert o["decisions_per_batch"] == 16 * 2  # (n_steps a table x the tables)
    with pytest.raises(ValueError, match="one option"):
        mod.check_options({"num_envs": 2, "n_envs": 2} if name == "sb3" else
                          {"decisions_per_batch": 256, list(OLD_NAMES[name])[0]: 256})


@pytest.mark.parametrize("name", [pytest.param(a, marks=pytest.mark.rllib) if a == "rllib" else a
                                  for a in ALGOS if a not in ("dmc", "tianshou")])
def test_the_target_is_one_option_in_every_learner(name, caplog):
    """Every learner that splits a hand's targets takes ``target`` (agents.integrations.targets' words; DMC's
    config key too; Tianshou's PPO runs its own GAE over the seat's whole hand, scores times ``reward_scale``);
    RLlib's old ``reward`` and its values are read as ``target``'s ("score" -> "none", "win" -> "sign") with
    a one-line deprecation."""
    import logging

    mod = learner(name)
    from agents.integrations.targets import TARGETS

    assert mod.DEFAULTS["target"] in TARGETS and "reward" not in mod.DEFAULTS
    assert mod.check_options({"target": "scale"})["target"] == "scale"
    with pytest.raises(ValueError, match="option 'target' must be"):
        mod.check_options({"target": "win"})
    if name == "rllib":
        with caplog.at_level(logging.WARNING, logger="ddz.train"):
            assert mod.check_options({"reward": "win"})["target"] == "sign"
        assert "option 'reward' is now 'target'" in caplog.text
        with pytest.raises(ValueError, match="one option"):
            mod.check_options({"reward": "win", "target": "sign"})
        from agents.integrations.rllib.module import env_reward

        o = mod.check_options({"target": "scale", "reward_scale": 1.0, "score_scale": 8.0})
        assert env_reward(o) == {"reward": "score", "reward_scale": 0.125, "score_scale": 8.0}
