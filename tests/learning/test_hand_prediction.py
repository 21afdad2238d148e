"""Hidden-hand prediction (config ``hand_prediction``, issue 20 item 2b, as DouZero+): each network also
predicts the other two hands from its state encoding, trained on the true hands; the true hands are a
training target only, never an input when acting (R21)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

from agents.dmc.config import load_config
from agents.dmc.learner.experience import Collector, hidden_hands
from agents.dmc.model import BIDDING_NET, HIDDEN_CELLS, OBS_CELLS, DMCModel, sample_cells
from agents.dmc.learner.trainer import learn, make_optimizer, train
from common import SMOKE
from ddz_env.cards import MAX_COUNTS
from ddz_env.readers import read_cards

TINY = {"num_envs": 16, "batch_size": 128, "total_frames": 1024, "state_layers": [32], "head_layers": [32, 16],
        "num_actors": 0, "eval_every": 0, "hand_prediction": 0.5}


def _cfg(**kw):
    return load_config(SMOKE, {**TINY, **kw})


def test_hidden_hands_are_the_next_then_the_previous_seats_cards():
    hands = np.arange(2 * 3 * 15).reshape(2, 3, 15).astype(np.int8) % 5
    got = hidden_hands(hands, np.array([0, 2]))
    np.testing.assert_array_equal(got[0], np.concatenate([hands[0, 1], hands[0, 2]]))
    np.testing.assert_array_equal(got[1], np.concatenate([hands[1, 0], hands[1, 1]]))
    assert got.shape == (2, HIDDEN_CELLS) and got.dtype == np.int8


def test_sample_rows_carry_the_true_other_hands_after_the_planes():
    """In the play phase the own hand (planes), the two target hands and the cards played (planes) make
    the whole deck; rows are 1770 cells with prediction, 1740 without."""
    cfg = _cfg()
    col = Collector(cfg, seed=3)
    model = DMCModel(**cfg.model_kwargs())
    batch = None
    while batch is None:
        col.step(model)
        batch = col.pop_batch(256)
    obs, _, net, _ = batch
    assert obs.shape == (256, sample_cells(True)) == (256, OBS_CELLS + HIDDEN_CELLS)
    planes = obs[:, :OBS_CELLS].reshape(-1, 29, 4, 15)
    own, played = read_cards(planes, "hand"), read_cards(planes, "played").sum(axis=1)
    others = obs[:, OBS_CELLS:].reshape(-1, 2, 15).sum(axis=1)
    play = net != BIDDING_NET
    assert play.sum() > 100
    np.testing.assert_array_equal((own + others + played)[play], np.broadcast_to(MAX_COUNTS, (int(play.sum()), 15)))
    plain = Collector(_cfg(hand_prediction=0.0), seed=3)
    assert plain.ring.arrays[0].shape[1] == OBS_CELLS


def test_the_networks_refuse_rows_that_carry_targets_and_act_on_planes_alone():
    """R21: a network's input is a seat's 1740 plane cells; a training row (planes + hidden hands) is
    refused, so no acting path can read the targets by mistake."""
    cfg = _cfg()
    model = DMCModel(**cfg.model_kwargs())
    rows = np.zeros((2, OBS_CELLS + HIDDEN_CELLS), np.int8)
    with pytest.raises(ValueError, match="no input"):
        model.choose(rows, np.array([0, 1]), np.array([0, 2, 4]), np.array([1, 2, 1, 2]))
    with pytest.raises(ValueError, match="no input"):
        model.q_pairs(0, torch.from_numpy(rows), torch.tensor([1, 2]))


def test_the_prediction_head_learns_and_a_run_with_it_trains_saves_and_plays(tmp_path):
    cfg = _cfg(lr=3e-3)
    col = Collector(cfg, seed=5)
    model = DMCModel(**cfg.model_kwargs())
    opt = make_optimizer(cfg, model)
    batch = None
    while batch is None:
        col.step(model)
        batch = col.pop_batch(512)

    def hand_ce() -> float:
        with torch.no_grad():
            obs_t = torch.from_numpy(batch[0])
            _, logits = model.q_pairs(0, obs_t[:, :OBS_CELLS], torch.from_numpy(batch[1].astype(np.int64)),
                                      with_hands=True)
            return float(torch.nn.functional.cross_entropy(logits.reshape(-1, 5), obs_t[:, OBS_CELLS:].long().reshape(-1)))

    before = hand_ce()
    for _ in range(40):
        losses = learn(model, opt, batch, cfg, torch.device("cpu"))
    assert all(np.isfinite(x) for x in losses if x == x)
    assert hand_ce() < 0.8 * before  # the landlord network's prediction of the others' counts improved
    # a whole (inline) run: its checkpoint has the head, loads as an agent and plays a hand from planes
    ck = train(_cfg(total_frames=512), tmp_path / "run", progress=False)
    import agents

    agent = agents.load(ck)
    assert agent.model.kwargs.get("predict_hands") is True and agent.model.nets[0].hands_head is not None
    res = agents.evaluate(agent, "random", deals=2, seed=1)
    assert res["deals"] == 2


def test_actor_processes_send_the_wider_rows_through_shared_memory(tmp_path):
    import agents

    ck = train(_cfg(num_actors=1, num_buffers=4, total_frames=512), tmp_path / "run", progress=False)
    assert agents.load(ck).model.predict_hands
