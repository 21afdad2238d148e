"""A library run keeps its work however it stops, and resumes only from a whole learner state.

Before: Ctrl-C kept what the last periodic checkpoint had (up to two minutes of work); a killed TorchRL
collector process ended the run in a traceback and, on ``--resume``, was reported as "learner state does not
load" (N37); a FIFO named ``state.json`` hung ``--resume`` for ever and a missing one restarted the run from
random weights without a word (N39). Every run here stops on decisions learned, never on seconds."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal

import pytest

from common import needs

pytestmark = needs("yaml", "train")


def _save_files(ses, saved: list):
    def save() -> None:
        saved.append(int(ses.done["steps"]))
        with open(ses.path("learner.bin"), "w") as f:
            f.write("weights")
    return save


def test_a_stop_inside_the_training_block_writes_the_learners_files_and_state_once_more(tmp_path):
    from agents.runs.session import LearnerStopped, Session

    for stop in (KeyboardInterrupt(), LearnerStopped("collector process 0 exited with code -9")):
        run = tmp_path / type(stop).__name__
        ses = Session("test", run, float("inf"), decisions=10_000, resume=False, progress=False,
                      state_files=("learner.bin",), checkpoint_seconds=1e9)
        saved: list[int] = []
        save = _save_files(ses, saved)
        with pytest.raises(type(stop)):
            with ses.keeping(save):
                while ses.running():
                    ses.done["steps"] += 100
                    ses.tick(save)
                    if ses.done["steps"] == 300:
                        raise stop
        assert saved == [300]  # no periodic checkpoint came (1e9 s): the stop wrote this one
        assert json.loads((run / "state.json").read_text())["steps"] == 300
        again = Session("test", run, float("inf"), decisions=400, resume=True, progress=False,
                        state_files=("learner.bin",))
        assert again.resuming and again.done["steps"] == 300 and again.running()


def test_a_resume_refuses_a_fifo_an_incomplete_state_and_a_state_that_is_not_counts(tmp_path):
    from agents.runs.session import Session

    def start(run, resume=True):
        return Session("test", run, 100.0, resume=resume, progress=False, state_files=("learner.bin",))

    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "state.json")
    (fifo / "learner.bin").write_text("weights")
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):  # (before: open() blocked for ever)
        start(fifo)
    half = tmp_path / "half"
    half.mkdir()
    (half / "learner.bin").write_text("weights")
    with pytest.raises(ValueError, match=r"learner state is incomplete \(state.json missing\)"):
        start(half)
    (half / "state.json").write_text('{"steps": "many"}')
    with pytest.raises(ValueError, match="not a learner's state"):
        start(half)
    (half / "state.json").write_text("{not json")
    with pytest.raises(ValueError, match="is not JSON"):
        start(half)
    assert not start(tmp_path / "empty").resuming  # nothing at all there: a fresh start, as before


def _small_ppo(run, *sets):
    args = ["--set", "max_seconds=0", "--set", "eval_deals=1", "--set", "eval_opponents=[random]"]
    for k, v in {"num_envs": 8, "decisions_per_batch": 128, "minibatch": 64, "state_layers": [32],
                 "head_layers": [16], "opponents": ["rule"], "progress_seconds": 1e9}.items():
        args += ["--set", f"options.{k}={json.dumps(v)}"]
    for s in sets:
        args += ["--set", s]
    return args


def test_a_killed_collector_process_stops_the_run_with_its_work_saved_and_resume_goes_on(tmp_path, capsys,
                                                                                          monkeypatch):
    import train as cli
    from agents.ppo.processes import ProcessCollectors

    refresh = ProcessCollectors.refresh
    updates = []

    def refresh_then_kill(self):  # the collector is killed (SIGKILL: the OOM killer's way) after 2 updates
        refresh(self)
        updates.append(1)
        if len(updates) == 2:
            os.kill(self.procs[0].pid, signal.SIGKILL)

    monkeypatch.setattr(ProcessCollectors, "refresh", refresh_then_kill)
    run = tmp_path / "run"
    code = cli.main(["--config", "ppo", "--run-dir", str(run), "--no-progress",
                     *_small_ppo(run, "max_decisions=100000", "options.collectors=1")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "collector process 0 exited with code -9" in err and f"--resume {run}" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert json.loads((run / "state.json").read_text())["steps"] >= 2 * 128  # its two updates, saved
    assert not multiprocessing.active_children()
    monkeypatch.setattr(ProcessCollectors, "refresh", refresh)
    saved = json.loads((run / "state.json").read_text())["steps"]
    assert cli.main(["--resume", str(run), "--no-progress", "--set", f"max_decisions={saved + 128}",
                     "--set", "options.collectors=0"]) == 0
    assert json.loads((run / "state.json").read_text())["steps"] >= saved + 128


def test_a_library_resume_with_its_state_json_gone_is_refused_not_restarted(tmp_path, capsys):
    import train as cli

    run = tmp_path / "run"
    assert cli.main(["--config", "ppo", "--run-dir", str(run), "--no-progress",
                     *_small_ppo(run, "max_decisions=128")]) == 0
    (run / "state.json").unlink()
    capsys.readouterr()
    assert cli.main(["--resume", str(run), "--no-progress", "--set", "max_decisions=256"]) == 2
    err = capsys.readouterr().err
    assert "state.json" in err and "missing" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("sig, code, said", [(signal.SIGTERM, 143, "stopped by SIGTERM"),
                                             (signal.SIGINT, 130, "interrupted")])
def test_a_signalled_library_run_saves_its_work_says_how_to_resume_and_resume_goes_on(tmp_path, sig, code, said):
    """SIGTERM (``kill``, a scheduler) and Ctrl-C take one path: the learner writes its state on the way out."""
    import subprocess
    import sys
    import threading

    from common import ROOT

    run = tmp_path / "run"
    args = _small_ppo(run, "max_decisions=10000000", "options.progress_seconds=0.000001",
                          "options.checkpoint_seconds=1000000000.0")
    p = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--config", "ppo", "--run-dir", str(run),
                          *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    guard = threading.Timer(300, lambda: os.killpg(p.pid, signal.SIGKILL))  # (only if it hangs)
    guard.start()
    try:
        for line in p.stdout:  # a progress line after every update: "ppo: 340 of 10,000,000 decisions ..."
            learned = re.match(r"ppo: ([\d,]+) of", line)
            if learned and int(learned.group(1).replace(",", "")) >= 256:
                break
        assert not (run / "state.json").exists()  # (no periodic checkpoint: 1e9 s)
        os.kill(p.pid, sig)
        out, err = p.communicate()
    finally:
        guard.cancel()
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == code and "Traceback" not in err, err[-3000:]
    assert err.strip().splitlines()[-1] == (f"train.py: {said}, the learner's work so far saved; continue with: "
                                            f"train.py --resume {run}"), err[-3000:]
    saved = json.loads((run / "state.json").read_text())["steps"]
    assert saved >= 256
    more = subprocess.run([sys.executable, str(ROOT / "train.py"), "--resume", str(run), "--no-progress", "--set",
                           f"max_decisions={saved + 128}"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert more.returncode == 0, more.stderr[-3000:]
    assert json.loads((run / "state.json").read_text())["steps"] >= saved + 128


FULL_DISK = """
import resource, signal, sys
sys.argv = ["train.py", *sys.argv[1:]]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (a write past the limit fails with EFBIG, as on a full disk)
resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, resource.RLIM_INFINITY))
import train
sys.exit(train.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("algo, options", [
    ("ppo", {"num_envs": 8, "decisions_per_batch": 128, "minibatch": 64}),
    ("tianshou", {"num_envs": 2, "decisions_per_batch": 64, "minibatch": 64, "opponents": ["random"]}),
])
def test_a_library_run_that_cannot_write_its_state_ends_in_one_line_not_a_traceback(tmp_path, algo, options):
    """N28 (TorchRL and Tianshou in the report; ppo is the learner TorchRL wrapped): files may grow to 60 kB only (RLIMIT_FSIZE: every write past it fails, as on a full disk), so the
    learner's state cannot be written; before, torch's writer's RuntimeError ended the run in a traceback."""
    if algo != "ppo":
        pytest.importorskip(algo)
    import subprocess
    import sys

    from common import ROOT

    run = tmp_path / "run"
    sets = ["--set", "max_seconds=0", "--set", "max_decisions=128", "--set", "eval_deals=1",
            "--set", "eval_opponents=[random]"]
    for k, v in {**options, "state_layers": [32], "head_layers": [16], "progress_seconds": 1e9}.items():
        sets += ["--set", f"options.{k}={json.dumps(v)}"]
    p = subprocess.run([sys.executable, "-c", FULL_DISK, "--config", algo, "--run-dir", str(run), "--no-progress",
                        *sets], cwd=ROOT, capture_output=True, text=True, timeout=300)
    lines = [x for x in p.stderr.splitlines() if "error" in x]
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert len(lines) == 1 and "writing the learner's state" in lines[0] and f"--resume {run}" in lines[0], lines
    assert not (run / "state.json").exists()  # (nothing vouches for a half-written state)


def test_a_learner_state_with_missing_keys_on_resume_is_one_line_not_a_traceback(tmp_path, capsys):
    import torch

    import train as cli

    run = tmp_path / "run"
    assert cli.main(["--config", "ppo", "--run-dir", str(run), "--no-progress",
                     *_small_ppo(run, "max_decisions=128")]) == 0
    state = torch.load(run / "ppo_state.pt", weights_only=True)
    torch.save({"optimizer": state["optimizer"]}, run / "ppo_state.pt")  # ("model" gone)
    capsys.readouterr()
    assert cli.main(["--resume", str(run), "--no-progress", "--set", "max_decisions=256"]) == 1
    err = capsys.readouterr().err
    assert "cannot resume" in err and "does not load" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
