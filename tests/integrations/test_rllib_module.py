"""RLlib adapter (agents/integrations/rllib_module.py, run in the RLlib venv: make test): the RLModule's
logits and values are the move-scoring policy's, one module plays all three seats, train() checkpoints,
resumes and exports what agents.load seats, and rllib:DIR reads a run folder weights-only and an RLlib
checkpoint only when trusted."""
from __future__ import annotations


import numpy as np
import pytest

pytest.importorskip("ray.rllib")
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

import agents  # noqa: E402
from agents.evaluation.protocols import evaluate  # noqa: E402
from agents.integrations.rllib_module import MODULE_ID, MoveScoringRLModule, build_config, make_env, train  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One short self-play run, resumed once: (its folder, the two results)."""
    torch.set_num_threads(1)
    d = tmp_path_factory.mktemp("rllib") / "run"
    opts = dict(batch=256, minibatch=128, epochs=1, state_layers=(64,), head_layers=(32,), progress_seconds=1e9)
    first = train(1, d, seed=1, progress=False, **opts)
    second = train(first["wall_seconds"] + 1, d, seed=1, resume=True, progress=False, **opts)
    return d, first, second


def observations(n=5):
    env = make_env()
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    rows = []
    while len(rows) < n:
        (agent, o), = obs.items()
        rows.append(o)
        legal = np.flatnonzero(o["action_mask"])
        obs, _, term, _, _ = env.step({agent: int(rng.choice(legal))})
        if term["__all__"]:
            obs, _ = env.reset()
    return {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in rows[0]}


def test_the_module_scores_legal_moves_only_and_its_value_is_the_policys():
    env = make_env()
    module = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                 action_space=env.action_space["player_0"],
                                 model_config={"state_layers": [64], "head_layers": [32]})
    obs = observations()
    out = module.forward_exploration({Columns.OBS: obs})
    logits = out[Columns.ACTION_DIST_INPUTS]
    legal = obs["action_mask"] > 0.5
    assert logits.shape == (5, 24648)
    assert (logits[~legal] < -1e30).all() and (logits[legal] > -1e30).all()
    expected, value = module.policy(obs["observations"], legal)
    assert torch.equal(logits[legal], expected[legal])
    assert torch.allclose(module.compute_values({Columns.OBS: obs}), value)
    # exploration draws (Gumbel-max, without torch.multinomial) land on legal ids only
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    draws = dist.sample(sample_shape=(200,))
    assert type(dist).__name__ == "GumbelTorchCategorical" and draws.shape == (200, 5)
    assert bool(legal.gather(1, draws.T).all())
    # a seat's last observation after its hand ended has no legal id: its value is still read
    done = {k: v.clone() for k, v in obs.items()}
    done["action_mask"][:] = 0
    assert module.compute_values({Columns.OBS: done}).shape == (5,)


def test_one_module_plays_all_three_seats():
    config = build_config()
    assert set(config.policies) == {MODULE_ID}
    assert {config.policy_mapping_fn(f"player_{s}", None) for s in range(3)} == {MODULE_ID}


def test_rllib_spec_reads_a_run_folder_and_a_checkpoint_only_when_trusted(run):
    d, _, _ = run
    ck = d / "rllib_checkpoint"
    with pytest.raises(ValueError, match=r"pickle.*\?trust=yes"):
        agents.load(f"rllib:{ck}")
    with pytest.raises(ValueError, match="one option"):
        agents.load(f"rllib:{ck}?trust=maybe")
    with pytest.raises(FileNotFoundError, match="not found"):
        agents.load(f"rllib:{d / 'nosuch'}")
    export, trusted = agents.load(f"rllib:{d}"), agents.load(f"rllib:{ck}?trust=yes")
    # the checkpoint's module weights and the exported policy are the same network
    for (k, a), (k2, b) in zip(export.policy.state_dict().items(), trusted.policy.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k
    a = evaluate(export, "rule", deals=2, seed=5)
    b = evaluate(trusted, "rule", deals=2, seed=5)
    assert a["A"]["mean_score"] == b["A"]["mean_score"]
