"""A learner for the tests of the ``algo`` seam (agents/runs/algos.py, agents/integrations/runner.py): it
follows the library learners' contract (train to a time, resumable state in the run folder, ``policy.pt`` in
the export format) without a library, counting 100 "steps" per second it is asked to train (up to ``decisions`` steps, when given, as a real
learner stops at the first of its two budgets)."""
import json
import os

DEFAULTS = {"width": 8, "fail_at": None, "init": None}
CALLS: list[dict] = []


def train(seconds, run_dir, *, decisions=None, seed=0, resume=False, progress=True, **options):
    import torch

    from agents.integrations.move_policy import MoveScoringPolicy, save_policy

    opts = {**DEFAULTS, **options}
    state_path = os.path.join(run_dir, "state.json")  # (where every learner keeps its counts: the runner looks)
    state = json.load(open(state_path)) if resume and os.path.exists(state_path) else {"seconds": 0.0, "steps": 0}
    CALLS.append({"seconds": seconds, "decisions": decisions, "resume": resume, "start": dict(state)})
    if opts["fail_at"] is not None and seconds >= opts["fail_at"]:
        raise KeyboardInterrupt
    if decisions is not None and state["steps"] + 100 * (seconds - state["seconds"]) > decisions:
        seconds = state["seconds"] + max(decisions - state["steps"], 0) / 100
    state["steps"] += int(round(100 * (seconds - state["seconds"])))
    state["seconds"] = float(seconds)
    torch.manual_seed(seed + state["steps"])
    save_policy(MoveScoringPolicy([opts["width"]], [opts["width"]]), os.path.join(run_dir, "policy.pt"),
                library="fake", steps=state["steps"])
    with open(state_path, "w") as f:
        json.dump(state, f)
    return {"steps": state["steps"], "cpu_seconds": 0.0, "wall_seconds": state["seconds"],
            "policy": os.path.join(run_dir, "policy.pt")}
