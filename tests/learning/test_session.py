"""The one run's session (agents/runs/session.py): its progress line's ETA toward the first budget."""
from __future__ import annotations

from agents.runs.session import Session


def session(tmp_path, seconds, decisions=None):
    return Session("x", tmp_path / "run", seconds, decisions=decisions, resume=False, progress=False,
                   clock=lambda: 0.0)


def test_the_eta_is_the_wall_time_to_the_first_budget_reached(tmp_path):
    s = session(tmp_path, 600.0)
    assert s.eta({"wall_seconds": 100.0, "steps": 0}, 10.0) == ", ETA 8m 20s"
    s = session(tmp_path, 600.0, decisions=10_000)
    assert s.eta({"wall_seconds": 100.0, "steps": 4_000}, 100.0) == ", ETA 1m 00s"  # (the decisions come first)
    assert s.eta({"wall_seconds": 100.0, "steps": 4_000}, 1.0) == ", ETA 8m 20s"  # (the seconds come first)
    s = session(tmp_path, float("inf"), decisions=1_000_000)
    assert s.eta({"wall_seconds": 0.0, "steps": 0}, 100.0) == ", ETA 2h 46m"
    assert s.eta({"wall_seconds": 0.0, "steps": 0}, 0.0) == ""  # (no rate yet: nothing to tell)
    assert session(tmp_path, 600.0).eta({"wall_seconds": 700.0, "steps": 0}, 5.0) == ", ETA 0m 00s"
