"""The self-play core over compact legal sets (agents/integrations/selfplay.py): the segment categorical is
the softmax of each decision's legal moves, GAE and the hand targets are what their docstrings say, the
collector's decisions are legal, carry their own seat's targets and only the learner's seats, and one PPO
step raises the probability of a move with positive advantage."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.dmc.model import BIDDING_NET
from agents.integrations.move_policy import MoveScoringPolicy
from agents.ppo.selfplay import (Collector, PPOSettings, gae, hand_targets, ppo_loss, segment_argmax,
                                          segment_dist, segment_entropy, segment_log_softmax, segment_sample)


def ragged(counts, seed=0):
    g = torch.Generator().manual_seed(seed)
    seg = torch.from_numpy(np.repeat(np.arange(len(counts)), counts))
    return torch.randn(int(sum(counts)), generator=g, dtype=torch.float64), seg


def test_segment_functions_are_each_decisions_softmax():
    counts = [1, 3, 7, 2]
    scores, seg = ragged(counts)
    logp = segment_log_softmax(scores, seg, len(counts))
    ent = segment_entropy(logp, seg, len(counts))
    best = segment_argmax(scores, seg, len(counts))
    for d, part in enumerate(torch.split(scores, counts)):
        ref = torch.log_softmax(part, 0)
        assert torch.allclose(logp[seg == d], ref)
        assert torch.allclose(ent[d], -(ref.exp() * ref).sum())
        assert int(best[d]) == int(torch.nonzero(seg == d)[0]) + int(part.argmax())


def test_segment_sample_draws_from_the_softmax():
    """Chi-square over 20,000 draws of one 4-move decision repeated: the Gumbel-max draws are the softmax's."""
    from scipy import stats

    n, k = 20_000, 4
    base = torch.tensor([0.5, -1.0, 1.5, 0.0], dtype=torch.float64)
    scores = base.repeat(n)
    seg = torch.arange(n).repeat_interleave(k)
    pick = segment_sample(scores, seg, n, torch.Generator().manual_seed(3)) - torch.arange(n) * k
    assert ((pick >= 0) & (pick < k)).all()
    observed = np.bincount(pick.numpy(), minlength=k)
    expected = torch.softmax(base, 0).numpy() * n
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_gae_at_lambda_one_is_the_final_target_and_at_zero_one_step():
    v = np.array([0.2, -0.1, 0.5], np.float32)
    adv, ret = gae(v, 1.0, 1.0)
    assert np.allclose(ret, 1.0) and np.allclose(adv, 1.0 - v)
    adv0, _ = gae(v, 1.0, 0.0)
    assert np.allclose(adv0, [v[1] - v[0], v[2] - v[1], 1.0 - v[2]])


def test_hand_targets_bids_end_in_the_score_and_play_in_its_sign():
    seat = np.array([0, 1, 2, 0, 1, 2, 0])
    bidding = np.array([True, True, True, False, False, False, False])
    scores = np.array([-12.0, 6.0, 6.0])
    _, ret = hand_targets(seat, bidding, np.zeros(7, np.float32), scores, 1.0, 8.0, "sign_play")
    assert np.allclose(ret, [-1.5, 0.75, 0.75, -1, 1, 1, -1])
    _, ret = hand_targets(seat, bidding, np.zeros(7, np.float32), scores, 1.0, 8.0, "scale")
    assert np.allclose(ret, [-1.5, 0.75, 0.75, -1.5, 0.75, 0.75, -1.5])


def small_policy(seed=0):
    torch.manual_seed(seed)
    return MoveScoringPolicy((32,), (16,))


def test_the_collector_releases_legal_decisions_with_their_seats_targets():
    """lambda 1: every released decision's return is its hand's end (sign or score / 8), so each is one of
    the values a hand can end in; choices index into their legal sets; nothing is released twice."""
    col = Collector(small_policy(), 16, seed=5, lam=1.0, bid_epsilon=0.2)
    batch = col.collect(600)
    counts = np.diff(batch.starts)
    assert len(batch) >= 600 and (counts >= 1).all()
    assert ((batch.choice.numpy() >= 0) & (batch.choice.numpy() < counts)).all()
    play = batch.net.numpy() != BIDDING_NET
    ret = batch.ret.numpy()
    assert np.allclose(ret[play], np.clip(np.round(ret[play]), -1, 1), atol=1e-5)  # -1, 0 (a void hand) or +1
    assert np.allclose(ret[~play] * 8, np.round(ret[~play] * 8), atol=1e-4)  # whole scores over 8
    assert col.hands > 0 and len(col.scores) == 3 * col.hands  # self-play: all three seats are the learner's
    again = col.collect(100)  # the store keeps only open hands: a new batch holds new decisions
    assert len(again) >= 100


def test_opponents_hold_seats_whose_decisions_are_not_samples():
    col = Collector(small_policy(), 16, seed=1, opponents=["rule"], opponent_share=1.0)
    assert ((col.holder >= 0).sum(1) >= 1).all() and ((col.holder >= 0).sum(1) <= 2).all()
    col.collect(300)
    assert len(col.scores) < 3 * col.hands  # the opponents' seats are not the learner's
    with pytest.raises(ValueError, match="target"):
        Collector(small_policy(), 4, seed=0, target="nope")


def test_a_ppo_step_raises_the_probability_of_a_positive_advantage_choice():
    policy = small_policy(2)
    col = Collector(policy, 8, seed=2)
    batch = col.collect(200)
    batch.adv = torch.where(torch.arange(len(batch)) % 2 == 0, 1.0, -1.0)
    seg, ids = batch.candidates()
    pos = torch.from_numpy(batch.starts[:-1]) + batch.choice

    def chosen_logp():
        with torch.no_grad():
            scores, _ = policy.score_legal(batch.obs, seg, ids)
            return segment_dist(scores, seg, len(batch), pos)[0]

    before = chosen_logp()
    assert torch.allclose(before, batch.logp, atol=1e-5)  # the stored behaviour log-probabilities are the policy's
    opt = torch.optim.SGD(policy.parameters(), lr=0.5)
    loss, parts = ppo_loss(policy, batch, PPOSettings(entropy_coeff=0.0, bid_entropy_coeff=0.0, vf_coef=0.0))
    opt.zero_grad()
    loss.backward()
    opt.step()
    after = chosen_logp()
    forced = np.diff(batch.starts) == 1
    up = (after - before)[~forced]
    adv = batch.adv[~forced]
    assert up[adv > 0].mean() > 0 > up[adv < 0].mean()


def test_torchrls_masked_categorical_over_candidates_is_the_segment_distribution():
    pytest.importorskip("torchrl")
    from agents.integrations.torchrl.modules import candidates_dist

    counts = [2, 5, 1, 9]
    scores, seg = ragged(counts, seed=4)
    scores = scores.float()
    starts = np.concatenate([[0], np.cumsum(counts)])
    pos = torch.from_numpy(starts[:-1] + np.array([1, 4, 0, 3]))
    lp, ent = segment_dist(scores, seg, len(counts), pos)
    lp2, ent2 = candidates_dist(scores, seg, len(counts), pos)
    assert torch.allclose(lp, lp2, atol=1e-5) and torch.allclose(ent, ent2, atol=1e-5)


def test_a_central_critic_sees_the_other_hands_and_the_actor_does_not():
    """With a central critic the collector's values are the critic's, computed from the planes and the two
    other seats' true hands (stored per decision for the update); the policy's inputs stay the planes."""
    from agents.dmc.model import hidden_hands
    from agents.ppo.selfplay import CentralCritic

    torch.manual_seed(0)
    critic = CentralCritic((16,))
    col = Collector(small_policy(), 8, seed=3, critic=critic)
    hands, seats = col.env.hands.copy(), col.env.current_player.copy()
    batch = col.collect(50)
    assert batch.hidden.shape == (len(batch), 30) and int(batch.hidden.sum()) > 0
    with torch.no_grad():
        again = critic(batch.obs, batch.hidden, batch.net)
    assert torch.allclose(again, batch.value, atol=1e-5)  # the stored values are the critic's
    first = hidden_hands(hands, seats)[0]
    assert (first.sum() > 0) and first.shape == (30,)
    loss, _ = ppo_loss(small_policy(), batch, PPOSettings(), critic=critic)
    loss.backward()
    assert all(p.grad is not None for p in critic.parameters())  # the critic learns from the value loss


def test_the_ppo_learner_trains_with_a_central_critic_and_exports_only_the_policy(tmp_path):
    import agents
    from agents.ppo.learner import train

    out = train(float("inf"), tmp_path / "run", decisions=256, progress=False, num_envs=8, decisions_per_batch=128,
                minibatch=64,
                state_layers=(32,), head_layers=(16,), central_critic=True, critic_layers=(16,),
                opponents=["rule"], progress_seconds=1e9)
    assert out["steps"] >= 128
    state = torch.load(tmp_path / "run" / "ppo_state.pt", weights_only=True)
    assert "critic" in state
    assert type(agents.load(str(tmp_path / "run" / "policy.pt"))).__name__ == "MoveScoringAgent"
