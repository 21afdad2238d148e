"""agents/runs/observers.py: each observer does its job on its period and at the end, whatever the learner."""
from __future__ import annotations

import logging

from agents.runs.observers import Checkpoints, Evaluations, LogRows, Progress


class FakeEvaluator:
    def __init__(self):
        self.submitted, self.pending, self.closed, self.polls = [], [], None, 0

    def poll(self):
        self.polls += 1

    def submit(self, model, frames, seconds):
        self.submitted.append(frames)

    def close(self, wait=True):
        self.closed = wait


class FakeRunLog:
    last_frames = None

    def __init__(self):
        self.added, self.written, self.closed = 0, [], False

    def add(self, losses, stats):
        self.added += 1

    def due(self, frames):
        return frames % 300 == 0

    def write(self, elapsed, frames, updates):
        self.written.append(frames)
        self.last_frames = frames
        return {"frames": frames}

    def close(self):
        self.closed = True


def run(observers, updates: int, per: int = 100, start: int = 0, fail: bool = False) -> Progress:
    p = Progress(start, 0, lambda: 1.0)
    for _ in range(updates):
        p.frames += per
        p.updates += 1
        for o in observers:
            o.update(p, [0.0], None)
    for o in observers:
        o.close(p, failed=fail)
    return p


def test_checkpoints_on_their_period_and_at_a_clean_end_only():
    saved = []
    run([Checkpoints(lambda p: saved.append(p.frames), period=250, frames=0)], updates=8)
    assert saved == [300, 500, 800, 800]  # every 250 frames (at the first update past), then the end
    saved.clear()
    run([Checkpoints(lambda p: saved.append(p.frames), period=250, frames=1000)], updates=3, start=1000, fail=True)
    assert saved == [1300]  # resumed at 1000: the next at 1250; a failed run adds none at the end


def test_evaluations_submit_on_their_period_and_the_final_weights():
    ev = FakeEvaluator()
    run([Evaluations(ev, model=None, period=400, frames=0, log=logging.getLogger("t"))], updates=9)
    assert ev.submitted == [400, 800, 900] and ev.closed is True and ev.polls == 9
    ev = FakeEvaluator()
    run([Evaluations(ev, model=None, period=400, frames=0, log=logging.getLogger("t"))], updates=5, fail=True)
    assert ev.submitted == [400] and ev.closed is False  # a failed run drops the evaluations in flight


def test_log_rows_when_due_and_the_last_row_at_the_end():
    rl, lines = FakeRunLog(), []
    run([LogRows(rl, lambda at, row: lines.append(at))], updates=7)
    assert rl.added == 7 and rl.written == [300, 600, 700] and lines == [300, 600] and rl.closed


def test_the_progress_bar_counts_toward_max_seconds_when_the_time_ends_the_run_first(capsys):
    # issue 47: the default config's bar counted to 200M frames, "0% ... <11:40:13", while its max_seconds
    # 3600 ended the run at the hour
    import pytest

    pytest.importorskip("tqdm")
    from agents.runs.observers import ProgressBar

    clock = {"t": 0.0}
    p = Progress(0, 0, lambda: clock["t"])
    bar = ProgressBar(200_000_000, 0, 128, [], max_seconds=3600)
    for frames, t in ((128, 5.0), (207_000, 69.0)):
        clock["t"], p.frames = t, frames
        bar.update(p, [0.0], None)
    fraction, text = bar.describe(207_000, 1800.0)
    assert abs(fraction - 0.5) < 1e-9 and text.startswith("30:00<30:00 to max_seconds 3600; 207k/200M frames"), text
    bar.close(p, failed=False)
    err = capsys.readouterr().err
    assert "01:09<58:51 to max_seconds 3600; 207k/200M frames, 3.23k fr/s" in err and "2%" in err, err

    # the frames run out first (5 s of frames at this rate, an hour allowed): the bar counts frames
    bar = ProgressBar(20_000, 0, 128, [], max_seconds=3600)
    bar.describe(1000, 1.0)
    fraction, text = bar.describe(11_000, 3.0)
    assert fraction == 11_000 / 20_000 and text.startswith("00:03<00:01 to total_frames; 11.0k/20.0k frames, 5.00k fr/s"), text
    bar.close(p, failed=True)
