"""Agents that fail on purpose, importable by spawned evaluation workers (tests/ is on their path)."""
import multiprocessing
import os
import signal

from agents import RuleAgent


class DiesInAWorker(RuleAgent):
    """The rule agent in the main process; in a worker process it kills that process (SIGKILL),
    as the out-of-memory killer or a person would."""

    def act_batch(self, decisions):
        if multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().act_batch(decisions)

    def __repr__(self):
        return "DiesInAWorker()"
