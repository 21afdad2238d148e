"""The pretrained DMC checkpoint shipped in the package (agents/pretrained/dmc.pt, issue 11): it
loads with weights_only=True, has its provenance, and plays legal full hands in every phase."""
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the DMC agent needs torch (the train extra)")

import agents  # noqa: E402
from agents.evaluation.arena import COL  # noqa: E402
from agents.evaluation.protocols import run_records  # noqa: E402
from agents.loader import PRETRAINED  # noqa: E402
from ddz_env import raw_env  # noqa: E402

PATH = Path(PRETRAINED)


def test_shipped_checkpoint_is_weights_only_small_and_documented():
    assert PATH.is_file(), f"the pretrained checkpoint is missing: {PATH}"
    assert PATH.stat().st_size <= 25 * 2**20
    ck = torch.load(PATH, map_location="cpu", weights_only=True)
    assert ck["agent"] == "dmc" and "optimizer" not in ck and "collector" not in ck
    prov = json.loads(PATH.with_suffix(".json").read_text())
    assert prov["frames"] == ck["frames"] > 0 and prov["config"] == ck["config"]
    assert prov["git_commit"] and prov["machine"] and prov["train_wall_seconds"] > 0
    assert prov["evaluations"] and all(e["command"] for e in prov["evaluations"])


def test_pretrained_plays_legal_full_hands_in_every_phase():
    """Duplicate deals against random (any illegal choice would raise AgentError): the records show
    the agent bidding, doubling as a farmer and asked to redouble as landlord."""
    rows = run_records("pretrained", "random", 12, seed=5)  # seatings AAB.. : agent A is "pretrained"
    asked = {"bid": 0, "double": 0, "redouble": 0}
    from agents.evaluation.protocols import DUPLICATE_SEATINGS

    for r in rows:
        seating = DUPLICATE_SEATINGS[r[COL["seating"]]]
        mine = [s for s in range(3) if seating[s] == "A"]
        asked["bid"] += sum(r[COL[f"bid{s}"]] >= 0 for s in mine)
        asked["double"] += sum(r[COL[f"dbl{s}"]] >= 0 for s in mine)
        asked["redouble"] += r[COL["redouble"]] >= 0 and r[COL["landlord"]] in mine
    assert all(v > 0 for v in asked.values()), asked
    assert (rows[:, COL["score0"]:COL["score2"] + 1].sum(axis=1) == 0).all()


def test_pretrained_acts_in_the_aec_env():
    agent = agents.load("pretrained")
    env = raw_env()
    for seed in range(3):
        env.reset(seed=seed)
        steps = 0
        for _name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            a = None if term or trunc else agent.act(obs)
            if a is not None:
                assert obs["action_mask"][a] == 1
            env.step(a)
            steps += 1
        assert steps > 3
