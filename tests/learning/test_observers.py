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
