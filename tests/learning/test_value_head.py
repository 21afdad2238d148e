"""The decomposed value head (config ``value_head: decomposed``; issue 20, 2a)."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

from agents import load
from agents.dmc.config import config_from_dict, load_config
from agents.dmc.model import DMCModel, combine
from agents.dmc.learner.trainer import decomposed_loss, train

from common import SMOKE


def test_q_is_the_outcome_weighted_value():
    parts = torch.tensor([[0.0, 0.0, -1e9, 2.0, -1.0],  # won / lost even, void impossible: (2 - 1) / 2
                          [5.0, -5.0, -5.0, 3.0, -3.0],  # almost surely won: ~3
                          [-9.0, -9.0, 9.0, 3.0, -3.0]])  # almost surely void: ~0
    q = combine(parts)
    np.testing.assert_allclose(q.numpy(), [0.5, 3.0, 0.0], atol=2e-3)


def test_the_loss_learns_the_outcome_and_only_the_value_of_what_happened():
    out = torch.zeros(3, 5, requires_grad=True)
    y = torch.tensor([0.5, -0.25, 0.0])  # won, lost, void
    decomposed_loss(out, y).sum().backward()
    g = out.grad
    assert g[0, 3] < 0 and g[0, 4] == 0  # a won hand pulls V_won up to 0.5, leaves V_lost alone
    assert g[1, 4] > 0 and g[1, 3] == 0  # a lost hand pulls V_lost down to -0.25
    assert g[2, 3] == 0 and g[2, 4] == 0  # a void hand teaches the outcome only
    assert g[0, 0] < 0 and g[1, 1] < 0 and g[2, 2] < 0  # each raises the logit of its own outcome


def test_decomposed_needs_the_scale_target_and_refuses_unknown_heads():
    with pytest.raises(ValueError, match="'value_head'"):
        config_from_dict({}, ["value_head=decomposed", "target=sign_play"])
    with pytest.raises(ValueError, match="'value_head'"):
        config_from_dict({}, ["value_head=dueling"])
    assert config_from_dict({}, ["value_head=decomposed", "target=scale"]).model_kwargs()["value_head"] == "decomposed"
    assert "value_head" not in config_from_dict({}).model_kwargs()  # old checkpoints' kwargs unchanged


def test_a_decomposed_run_trains_and_its_checkpoint_plays(tmp_path):
    cfg = load_config(SMOKE, {"num_envs": 16, "batch_size": 128, "total_frames": 2048, "state_layers": [32],
                              "head_layers": [32, 16], "log_every_frames": 512, "eval_every": 0, "value_head": "decomposed",
                              "target": "scale"})
    ckpt = train(cfg, tmp_path / "run", progress=False)
    agent = load(str(ckpt))
    assert agent.model.decomposed and agent.model.nets[0].head[-1].out_features == 5
    from agents.evaluation.protocols import evaluate

    res = evaluate(agent, "random", deals=4, seed=0)
    assert res is not None
    m = DMCModel([8], [8, 4], value_head="decomposed")
    with pytest.raises(RuntimeError):  # a one-output checkpoint does not load into a decomposed model
        m.load_state_dict(DMCModel([8], [8, 4]).state_dict())
