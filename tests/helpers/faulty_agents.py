"""Agents that fail on purpose, importable by spawned evaluation workers (tests/ is on their path)."""
import multiprocessing
import os
import signal
import time

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


class Slow(RuleAgent):
    """The rule agent, taking ``delay`` seconds over each decision, as a search agent thinks (up to 2 s an answer):
    the web page's tests act while it thinks, the same every run."""

    def __init__(self, delay: float = 0.5, gate=None, **kwargs):
        super().__init__(**kwargs)
        self.delay, self.gate = delay, gate

    def act_batch(self, decisions):
        time.sleep(self.delay)
        if self.gate is not None:  # (a test holds the answer until it has acted: no race with a busy machine)
            self.gate.wait(timeout=300)
        return super().act_batch(decisions)

    def __repr__(self):
        return f"Slow(delay={self.delay})"
