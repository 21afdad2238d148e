"""The ``algo`` seam of train.py (agents/runs/algos.py, agents/runs/library.py): a config chooses
its learner; a library learner runs in a run folder like DMC's (config.yaml, log.csv, eval.csv at each
evaluation time, the policy that agents.load seats) and resumes it. A test learner (tests/helpers/
fake_learner.py) stands in for the libraries here; tests/integrations run the real ones."""
from __future__ import annotations

import csv

import pytest

from common import needs_torch

pytestmark = needs_torch


@pytest.fixture
def fake(monkeypatch):
    import fake_learner

    from agents.runs import algos

    monkeypatch.setitem(algos.ALGOS, "fake", ("fake_learner", "a test learner"))
    fake_learner.CALLS.clear()
    return fake_learner


def write_config(tmp_path, **keys) -> str:
    import yaml

    path = tmp_path / "fake.yaml"
    path.write_text(yaml.safe_dump({"algo": "fake", "name": "fake", "eval_deals": 2, "eval_opponents": ["random"],
                                    **keys}))
    return str(path)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_library_config_runs_once_evaluating_inside_the_learner_on_its_cadence_and_resumes(tmp_path, fake):
    """One ``train`` call a run (a library starts once: before, each evaluation ended a segment and the next
    started the learner, and Ray, again); the learner calls the run's evaluation on the cadence."""
    import agents
    from agents.cli.train import main

    cfg = write_config(tmp_path, max_seconds=30.0, eval_every_seconds=10.0)
    run_dir = tmp_path / "run"
    assert main(["--config", cfg, "--run-dir", str(run_dir), "--no-progress", "--set", "options.width=4"]) == 0
    assert [(c["seconds"], c["resume"]) for c in fake.CALLS] == [(30.0, False)]
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000, 2000, 3000]
    assert [float(r["train_seconds"]) for r in rows(run_dir / "log.csv")] == [10.0, 20.0, 30.0]
    assert (run_dir / "learning_curve.png").stat().st_size > 1000  # the run's picture, as DMC runs have
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        pass
    else:
        assert any((run_dir / "tensorboard").iterdir())  # and its TensorBoard scalars
    agent = agents.load(str(run_dir))  # the run folder seats its policy
    assert agent.name == "movescore:fake" and agent.policy.kwargs["state_layers"] == [4]
    # --resume with more time: on from its state, no point evaluated twice
    fake.CALLS.clear()
    assert main(["--resume", str(run_dir), "--set", "max_seconds=40", "--no-progress"]) == 0
    assert [(c["seconds"], c["resume"], c["start"]["steps"]) for c in fake.CALLS] == [(40.0, True, 3000)]
    assert [float(r["train_seconds"]) for r in rows(run_dir / "log.csv")] == [10.0, 20.0, 30.0, 40.0]
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000, 2000, 3000, 4000]


def test_a_decisions_budget_ends_the_run_and_cuts_its_segments_whatever_the_clock(tmp_path, fake):
    """max_decisions / eval_every_decisions: the learner is asked for the run's decisions (with no time limit when
    max_seconds is 0) and evaluates every 1,000, the run ends when they are learned, and a resume goes on."""
    from agents.cli.train import main

    cfg = write_config(tmp_path, max_seconds=0, max_decisions=2500, eval_every_decisions=1000)
    run_dir = tmp_path / "run"
    assert main(["--config", cfg, "--run-dir", str(run_dir), "--no-progress"]) == 0
    assert [(c["seconds"], c["decisions"]) for c in fake.CALLS] == [(float("inf"), 2500)]
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000, 2000, 2500]
    assert [float(r["train_seconds"]) for r in rows(run_dir / "log.csv")] == [10.0, 20.0, 25.0]
    fake.CALLS.clear()
    assert main(["--resume", str(run_dir), "--set", "max_decisions=3000", "--no-progress"]) == 0
    assert [(c["decisions"], c["start"]["steps"]) for c in fake.CALLS] == [(3000, 2500)]
    # both budgets: the first reached ends the run (here the seconds: 100 steps a second, 12 s < 2,500 decisions)
    fake.CALLS.clear()
    cfg = write_config(tmp_path, max_seconds=12.0, max_decisions=2500)
    assert main(["--config", cfg, "--run-dir", str(tmp_path / "both"), "--no-progress"]) == 0
    assert [(c["seconds"], c["decisions"]) for c in fake.CALLS] == [(12.0, 2500)]
    assert [int(r["frames"]) for r in rows(tmp_path / "both" / "eval.csv")] == [1200]


def test_an_interrupted_run_resumes_where_its_log_ends(tmp_path, fake, capsys):
    from agents.cli.train import main

    cfg = write_config(tmp_path, max_seconds=30.0, eval_every_seconds=10.0, options={"fail_at": 20.0})
    run_dir = tmp_path / "run"
    assert main(["--config", cfg, "--run-dir", str(run_dir), "--no-progress"]) == 130
    assert f"--resume {run_dir}" in capsys.readouterr().err
    fake.CALLS.clear()
    assert main(["--resume", str(run_dir), "--set", "options.fail_at=null", "--no-progress"]) == 0
    assert [(c["seconds"], c["start"]["seconds"]) for c in fake.CALLS] == [(30.0, 20.0)]  # (its work kept: 20 s)
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000, 2000, 3000]


@pytest.mark.parametrize("sets, words", [
    (["options.widht=3"], "fake: unknown option 'widht' (did you mean 'width'?)"),
    (["options.init=nope"], "fake: option 'init': no checkpoint at nope"),
    (["eval_every_seconds=0.01"], "config key 'eval_every_seconds': must be 0 (only at the end) or at least 10"),
    (["eval_opponents=[rul]"], "config key 'eval_opponents': unknown agent 'rul'"),
    (["algo=torchrll"], "unknown learner 'torchrll' (did you mean 'torchrl'?)"),
    (["max_seconds=0"], "config key 'max_seconds': must be positive unless max_decisions is"),
    (["max_seconds=-1"], "config key 'max_seconds'"),
    (["max_decisions=-5"], "config key 'max_decisions': must be an integer >= 0"),
    (["eval_every_decisions=1.5"], "config key 'eval_every_decisions'"),
    (["options=3"], "config key 'options': expected a mapping"),
    (["algo=dmc", "options.width=3"], "unknown config key 'options.width'"),
])
def test_bad_learner_configs_are_refused_before_the_run_folder_exists(tmp_path, fake, capsys, sets, words):
    from agents.cli.train import main

    args = ["--config", write_config(tmp_path), "--run-dir", str(tmp_path / "run"), "--no-progress"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_a_missing_library_is_one_line_naming_the_install_before_the_run_folder(tmp_path, fake, capsys,
                                                                                 monkeypatch):
    from agents.cli.train import main
    from agents.runs import algos

    monkeypatch.setitem(algos.REQUIRES, "fake", (("no_such_library_xyz",), "marl"))
    assert main(["--config", write_config(tmp_path), "--run-dir", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "not installed: no_such_library_xyz" in err and "pip install -e " in err and '[marl]"' in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_a_resume_of_a_finished_run_trains_and_logs_nothing_more(tmp_path, fake):
    from agents.cli.train import main

    run_dir = tmp_path / "run"
    assert main(["--config", write_config(tmp_path, max_seconds=20.0, eval_every_seconds=10.0), "--run-dir",
                 str(run_dir), "--no-progress"]) == 0
    logged, evaluated = (run_dir / "log.csv").read_text(), (run_dir / "eval.csv").read_text()
    fake.CALLS.clear()
    assert main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert fake.CALLS == [] and (run_dir / "log.csv").read_text() == logged
    assert (run_dir / "eval.csv").read_text() == evaluated


def test_a_stop_between_a_segments_log_row_and_its_evaluation_is_evaluated_on_resume(tmp_path, fake, monkeypatch):
    from agents.cli.train import main
    from agents.runs import library as runner

    real = runner.evaluate_policy
    calls = []

    def stopped_once(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 2:  # the second segment's evaluation: stopped after its log row was written
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "evaluate_policy", stopped_once)
    run_dir = tmp_path / "run"
    cfg = write_config(tmp_path, max_seconds=30.0, eval_every_seconds=10.0)
    assert main(["--config", cfg, "--run-dir", str(run_dir), "--no-progress"]) == 130
    assert [int(r["steps"]) for r in rows(run_dir / "log.csv")] == [1000, 2000]
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000]
    assert main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert [int(r["frames"]) for r in rows(run_dir / "eval.csv")] == [1000, 2000, 3000]
    assert [int(r["steps"]) for r in rows(run_dir / "log.csv")] == [1000, 2000, 3000]


def test_a_full_disk_in_a_library_run_is_one_line_with_the_resume_command(tmp_path, fake, capsys, monkeypatch):
    import errno

    from agents.cli.train import main
    from agents.runs import library as runner

    def full(path, text, encoding="utf-8"):
        if str(path).endswith("eval.csv"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, text, encoding)

    real = runner.write_text
    monkeypatch.setattr(runner, "write_text", full)
    run_dir = tmp_path / "run"
    assert main(["--config", write_config(tmp_path), "--run-dir", str(run_dir), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "eval.csv" in err and f"--resume {run_dir}" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_dmc_config_names_its_algo_and_refuses_a_library_one(tmp_path):
    from agents.dmc.config import load_config

    from common import SMOKE

    assert load_config(SMOKE).algo == "dmc"
    with pytest.raises(ValueError, match="'dmc' with these keys; a library learner's config has its own"):
        load_config(SMOKE, {"algo": "torchrl"})


def test_a_new_run_never_starts_in_a_folder_that_holds_one(tmp_path, fake, capsys):
    """A second ``train.py --run-dir X`` (a rerun of ``make demo``) would mix the old checkpoint with the new
    log: it is refused, naming --resume; the folder is left as it was."""
    import train as cli

    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoint.pt").write_bytes(b"old")
    for config in ("smoke", write_config(tmp_path)):
        assert cli.main(["--config", config, "--run-dir", str(run), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "already holds a run (checkpoint.pt)" in err and f"--resume {run}" in err, err
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"] and (run / "checkpoint.pt").read_bytes() == b"old"


def test_a_one_deal_evaluation_has_no_interval_and_the_run_still_logs_and_draws_it(tmp_path, fake, caplog):
    """bench_marl_learning runs each learner with eval_deals=1: one deal has no 95% interval (None), which
    the evaluation's log line formatted as a number (a logging error) and the curve read as '' (no PNG)."""
    import logging

    from agents.cli.train import main

    cfg = write_config(tmp_path, max_seconds=10.0, eval_deals=1)
    run_dir = tmp_path / "run"
    with caplog.at_level(logging.INFO, logger="ddz.train"):
        assert main(["--config", cfg, "--run-dir", str(run_dir), "--no-progress"]) == 0
    [row] = rows(run_dir / "eval.csv")
    assert row["ci_lo"] == "" and row["ci_hi"] == ""
    assert any("eval at 1000 steps vs random: " in r.getMessage() and "[" not in r.getMessage()
               for r in caplog.records)
    assert (run_dir / "learning_curve.png").stat().st_size > 1000
