"""Issue 62, N38 and N46: an evaluation's worker processes end with it, and an agent they cannot be sent is
refused before any starts.

N38: ``evaluate.py --workers 2`` (or the league) stopped by ``SIGKILL`` (a person's ``kill -9``, the
out-of-memory killer) or ``SIGTERM`` left its workers running for ever, each holding its agents (364 MB a
worker with ``pretrained``), waiting for a next chunk that would never come. Now ``SIGTERM`` is taken as
Ctrl-C (the workers are ended, one line, exit 143), and a worker whose evaluation is gone ends itself (on
Linux the kernel's parent-death signal; everywhere a thread that watches the parent's id).

N46: ``evaluate(..., workers=2)`` with an agent that cannot be pickled hung in 2 runs of 6; now a
``TypeError`` in one line, before any worker starts."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from common import ROOT

#: how long a worker may outlive its evaluation before the test calls it left behind (a poll: the test goes
#: on as soon as every worker is gone)
GONE_WITHIN_S = 60


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (its spawned workers and the resource tracker)."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True,
                         timeout=30).stdout
    return sorted(map(int, out.split()))


def workers_of(pid: int) -> list[int]:
    """The evaluation workers of ``pid``: its spawned children, not the resource tracker."""
    found = []
    for k in children(pid):
        try:
            cmd = open(f"/proc/{k}/cmdline", "rb").read()
        except OSError:
            continue
        if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
            found.append(k)
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting for its parent to reap it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def left_running(pids: list[int], within: float = GONE_WITHIN_S) -> list[int]:
    """The processes of ``pids`` still running after ``within`` seconds (polled: [] as soon as all are gone)."""
    deadline = time.monotonic() + within
    while True:
        alive = [k for k in pids if running(k)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


class Run:
    """A program started in a subprocess, its output in files (a pipe would stay open as long as any worker
    holding it runs: a reader would wait for the workers, not for the program)."""

    def __init__(self, args: list[str], folder):
        self.out, self.err = folder / "stdout.txt", folder / "stderr.txt"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.p = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=out, stderr=err,
                                      stdin=subprocess.DEVNULL)
        self.pid = self.p.pid

    def wait(self, timeout: float) -> int | None:
        """The exit status, or None if the program still runs after ``timeout`` seconds (then it is killed)."""
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=60)
            return None

    def stderr(self) -> str:
        return self.err.read_text()


def wait_until_playing(run: Run, ready, within: float = 240) -> list[int]:
    """The two workers of evaluation ``run``, once both exist and ``ready()`` says the evaluation plays."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and run.p.poll() is None:
        found = workers_of(run.pid)
        if len(found) == 2 and ready():
            return found
        time.sleep(0.1)
    status = run.wait(0)
    pytest.fail(f"the evaluation's two workers never played (exit {status}): {run.stderr()[-2000:]}")


def kill_all(pids: list[int]) -> None:
    """(cleanup: what a failing run left behind must not keep running on the test machine)"""
    for k in pids:
        if running(k):
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass


EVALUATE = ["evaluate.py", "--a", "rule", "--b", "random", "--deals", "100000", "--workers", "2", "--no-progress"]
LEAGUE = ["evaluate.py", "--league", "rule", "random", "--deals", "100000", "--workers", "2", "--no-progress"]


def started(program: str, tmp_path) -> tuple[Run, list[int]]:
    """An evaluation (or a league) on two workers that hours would not finish, once its workers play:
    for the evaluation, once they have saved a first hand record; for the league, once its plan is printed
    (every agent loaded, before the first hand)."""
    if program == "evaluate":
        replays = tmp_path / "replays"
        run = Run([*EVALUATE, "--save-replays", str(replays)], tmp_path)
        return run, wait_until_playing(run, lambda: replays.is_dir() and any(replays.glob("deal*.json")))
    run = Run(LEAGUE, tmp_path)
    found = wait_until_playing(run, lambda: run.out.read_text().startswith("league: 2 agents, 1 pair"))
    return run, found


@pytest.mark.parametrize("program", ["evaluate", "league"])
def test_the_workers_of_an_evaluation_killed_with_sigkill_end_with_it(program, tmp_path):
    """SIGKILL (as the out-of-memory killer) cannot be caught: the orphaned workers notice and end themselves."""
    run, found = started(program, tmp_path)
    everything = children(run.pid)  # (the workers and the resource tracker)
    try:
        os.kill(run.pid, signal.SIGKILL)
        assert run.wait(60) == -signal.SIGKILL
        assert left_running(found) == [], f"the workers {found} still run after their evaluation was killed"
        assert left_running(everything) == []
    finally:
        kill_all(everything)


@pytest.mark.parametrize("program", ["evaluate", "league"])
def test_sigterm_stops_an_evaluation_as_ctrl_c_does_its_workers_ended_in_one_line(program, tmp_path):
    run, found = started(program, tmp_path)
    everything = children(run.pid)
    try:
        run.p.send_signal(signal.SIGTERM)
        status = run.wait(120)
        assert left_running(found) == [], f"the workers {found} still run after their evaluation stopped"
        assert left_running(everything) == []
        err = run.stderr()
        lines = [x for x in err.splitlines() if x.strip()]
        assert status == 143 and "Traceback" not in err and len(lines) == 1, (status, err[-3000:])
        assert "stopped by SIGTERM" in lines[0], lines
        if program == "evaluate":
            assert "no figures; the hand records already in" in lines[0]
    finally:
        kill_all(everything)


#: a process that starts one spawned child watching it with the portable check alone (no Linux death signal),
#: prints the child's pid, then waits to be killed
ORPHAN = """
import multiprocessing as mp, os, sys, time
from agents.evaluation.protocols import end_with_parent

def child(parent):
    end_with_parent(parent, deathsig=False, every=0.1)
    time.sleep(600)

if __name__ == "__main__":
    c = mp.get_context("spawn").Process(target=child, args=(os.getpid(),))
    c.start()
    print(c.pid, flush=True)
    time.sleep(600)
"""


def test_without_the_linux_death_signal_a_worker_still_ends_when_its_parent_is_killed(tmp_path):
    """The portable check (the parent's id watched from a thread) ends a worker alone, as on macOS."""
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    kid = None
    try:
        kid = int(p.stdout.readline())
        assert running(kid)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
        assert left_running([kid]) == [], "the child outlived its parent"
    finally:
        if p.poll() is None:
            p.kill()
        kill_all([kid] if kid else [])
        p.stdout.close()


#: agents the workers cannot be sent, each tried 5 times in one process (the hang came in 2 runs of 6)
UNPICKLABLE = """
import sys
from agents import RuleAgent
from agents.evaluation import evaluate
from agents.evaluation.league import play_league

def local_class():
    class Mine(RuleAgent):
        pass
    return Mine()

def holding_a_lambda():
    agent = RuleAgent()
    agent.choose = lambda x: x
    return agent

if __name__ == "__main__":
    for make in (local_class, holding_a_lambda):
        for _ in range(5):
            try:
                evaluate(make(), "random", deals=4, seed=1, workers=2)
            except TypeError as e:
                print(str(e).replace("\\n", " | "), flush=True)
            else:
                print("played", flush=True)
    try:
        play_league(["rule", "random", holding_a_lambda()], deals=2, workers=2)
    except TypeError as e:
        print(str(e).replace("\\n", " | "), flush=True)
"""


def test_an_agent_that_cannot_be_pickled_is_refused_in_one_line_before_any_worker_starts(tmp_path):
    script = tmp_path / "unpicklable.py"
    script.write_text(UNPICKLABLE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        p = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, env=env,
                           timeout=300)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"evaluate(workers=2) with an agent that cannot be pickled hung: {e.stdout!r}")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    lines = p.stdout.splitlines()
    assert len(lines) == 11, p.stdout
    for line in lines:
        assert "cannot be sent to 2 worker processes: it cannot be pickled" in line and "workers=1" in line, line
    assert all("local object" in x and "Mine" in x for x in lines[:5]), lines[:5]
    assert all("lambda" in x for x in lines[5:]), lines[5:]
