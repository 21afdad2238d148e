"""A learner for the tests of the ``algo`` seam (agents/runs/algos.py, agents/runs/library.py): it
follows the library learners' contract (train to a budget of seconds or decisions, the first reached; its
state in the run folder, resumable; the run's evaluations on its cadence; ``policy.pt`` in the export format)
without a library. It runs the real :class:`~agents.runs.session.Session` on a simulated clock: each
update takes one second and learns 100 decisions, on any machine."""
import os

DEFAULTS = {"width": 8, "fail_at": None, "init": None}
#: its own knobs: (check, what the value must be, help), beside the shared options' checks
OWN = {"width": (lambda v: isinstance(v, int) and 1 <= v <= 64, "an integer 1..64", "the network's width"),
       "fail_at": (lambda v: isinstance(v, (int, float)), "a number of seconds", "Ctrl-C at this many seconds")}
CALLS: list[dict] = []


def check_options(options):
    from agents.integrations.options import check_options as check

    return check("fake", options, DEFAULTS, own=OWN)


def train(seconds, run_dir, *, decisions=None, cadence=None, seed=0, resume=False, progress=True, **options):
    import torch

    from agents.integrations.move_policy import MoveScoringPolicy, save_policy
    from agents.runs.session import Session

    opts = {**DEFAULTS, **options}
    now = [0.0]
    ses = Session("fake", run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=False,
                  checkpoint_seconds=1e9, progress_seconds=1e9, clock=lambda: now[0])
    CALLS.append({"seconds": seconds, "decisions": decisions, "resume": resume,
                  "start": {"seconds": ses.done["wall_seconds"], "steps": ses.done["steps"]}})

    def save():
        torch.manual_seed(seed + ses.done["steps"])
        save_policy(MoveScoringPolicy([opts["width"]], [opts["width"]]), ses.policy_path, library="fake",
                    steps=int(ses.done["steps"]))

    with ses.keeping(save):
        while ses.running():
            if opts["fail_at"] is not None and ses.totals()["wall_seconds"] >= opts["fail_at"]:
                raise KeyboardInterrupt
            now[0] += 1.0
            ses.done["steps"] += 100
            ses.tick(save)
    out = ses.finish(save)
    return {**out, "policy": os.path.join(run_dir, "policy.pt")}
