"""TorchRL's own learner (agents/integrations/torchrl/learner.py): each seat's decisions are regrouped into the
seat's own trajectory before TorchRL's GAE, so a decision's advantage uses its own seat's next value and final
result; hands still running are carried to the next batch; ClipPPOLoss's updates lower the loss on a batch of
self-play decisions; options of the old wrapper are warned about, not refused."""
from __future__ import annotations

import pytest

pytest.importorskip("torchrl")
import numpy as np  # noqa: E402
import torch  # noqa: E402
from tensordict import TensorDict  # noqa: E402

from agents.integrations.torchrl.learner import regroup, with_advantages  # noqa: E402
from agents.ppo.selfplay import gae as reference_gae  # noqa: E402
from ddz_env.observation import CH_STATUS, OBS_SHAPE  # noqa: E402

pytestmark = pytest.mark.integration
PLAY = 3  # (the status plane's phase cell of the play phase)


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


class _CodedValue(torch.nn.Module):
    """A critic whose value of a state is 0.1 times the number written in its planes' first cell."""

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return obs[..., 0, 0, 0].float().unsqueeze(-1) * 0.1


def rollout():
    """2 tables x 6 steps, seats taking turns. Table 0 (seats 0 1 2 0 1 2): bids at steps 0-2, play at 3-5, the
    hand ends at step 5 with scores (+4, -2, -2). Table 1 (seats 1 2 0 1 2 0, all bids): its hand ends at step 3
    with (-2, +4, -2); steps 4 and 5 belong to a hand still running. Each state's value is coded in its planes
    (1..12 tenths); each action id names its table and step (10 * table + step)."""
    B, T = 2, 6
    obs = torch.zeros((B, T) + OBS_SHAPE, dtype=torch.int8)
    obs[..., 0, 0, 0] = torch.arange(1, B * T + 1, dtype=torch.int8).reshape(B, T)
    obs[0, 3:, CH_STATUS, 0, PLAY] = 1
    seat = torch.tensor([[0, 1, 2, 0, 1, 2], [1, 2, 0, 1, 2, 0]])
    reward = torch.zeros(B, T, 3)
    done = torch.zeros(B, T, 1, dtype=torch.bool)
    reward[0, 5], done[0, 5] = torch.tensor([4.0, -2.0, -2.0]), True
    reward[1, 3], done[1, 3] = torch.tensor([-2.0, 4.0, -2.0]), True
    action = (10 * torch.arange(B).unsqueeze(1) + torch.arange(T)).long()
    return TensorDict({"observation": obs, "action_mask": torch.ones(B, T, 4, dtype=torch.bool), "seat": seat,
                       "action": action, "action_log_prob": torch.zeros(B, T),
                       "next": TensorDict({"reward": reward, "done": done}, batch_size=(B, T))}, batch_size=(B, T))


def test_gae_runs_along_each_seats_own_decisions_with_its_own_final_result():
    """Every decision's advantage is GAE (gamma 1, lambda 0.5) over its own seat's decisions of its hand, bids
    and play apart, from that seat's next value to its own result (play: win/loss; bids: score / 2), the
    project's reference ``agents.ppo.selfplay.gae``; not GAE along the table's steps, which would take the next
    seat's value. The two decisions of the unfinished hand are carried, not learned from."""
    from torchrl.objectives.value import GAE

    from torchrl.modules import ValueOperator

    data = rollout()
    lam, scale = 0.5, 2.0
    traj, carry = regroup(data, None, target="sign_play", score_scale=scale)
    critic = ValueOperator(_CodedValue(), in_keys=["observation"])
    traj = with_advantages(traj, critic, GAE(gamma=1.0, lmbda=lam, value_network=None, time_dim=0))
    assert sorted(carry["action"].tolist()) == [14, 15]
    assert traj.batch_size[0] == 10
    adv = dict(zip(traj["action"].tolist(), traj["advantage"].squeeze(-1).tolist()))
    target = dict(zip(traj["action"].tolist(), traj["value_target"].squeeze(-1).tolist()))
    value = (np.arange(1, 13, dtype=np.float32) * 0.1).reshape(2, 6)
    # (table, steps of one seat's trajectory, its final result)
    trajectories = [(0, [0], 4 / scale), (0, [1], -2 / scale), (0, [2], -2 / scale),  # bids of table 0
                    (0, [3], 1.0), (0, [4], -1.0), (0, [5], -1.0),  # play of table 0: win/loss
                    (1, [0, 3], 4 / scale), (1, [1], -2 / scale), (1, [2], -2 / scale)]  # table 1: seat 1 bids twice
    for b, steps, final in trajectories:
        want_adv, want_ret = reference_gae(value[b, steps], final, lam)
        for t, a, r in zip(steps, want_adv, want_ret):
            assert adv[10 * b + t] == pytest.approx(float(a), abs=1e-5), (b, t)
            assert target[10 * b + t] == pytest.approx(float(r), abs=1e-5), (b, t)
    # along the table's own steps seat 1's first bid (table 1, step 0) would see seat 2's value next, not its own
    wrong = value[1, 1] - value[1, 0]
    assert adv[10] != pytest.approx(float(wrong), abs=1e-3)


def test_the_carried_decisions_of_a_running_hand_join_it_in_the_next_batch():
    """The hand left running at table 1 ends in the next batch (its first step, by seat 1): the two carried
    decisions (seats 2 and 0) come out with it, each with its own seat's result; the next batch's running
    hands are carried in turn."""
    data = rollout()
    _, carry = regroup(data, None, target="scale", score_scale=1.0)
    nxt = rollout()
    nxt["next", "done"][:] = False
    nxt["next", "reward"][:] = 0
    nxt["next", "done"][1, 0] = True
    nxt["next", "reward"][1, 0] = torch.tensor([1.0, 1.0, -2.0])
    nxt["action"] += 100
    traj, carry = regroup(nxt, carry, target="scale", score_scale=1.0)
    got = dict(zip(traj["action"].tolist(), traj["next", "reward"].squeeze(-1).tolist()))
    assert got == {14: -2.0, 15: 1.0, 110: 1.0}  # (each the one decision of its seat in that hand: all last)
    assert traj["next", "done"].all()
    assert carry is not None and sorted(carry["action"].tolist()) == list(range(100, 106)) + [111, 112, 113, 114, 115]


def test_clip_ppo_updates_lower_the_loss_on_a_batch_of_self_play_decisions():
    """A short self-play rollout through TorchRL's Collector, regrouped, with GAE: ten ClipPPOLoss updates on it
    lower its total loss (the critic's error most)."""
    from torchrl.collectors import Collector
    from torchrl.envs.utils import ExplorationType
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    from agents.integrations.move_policy import MoveScoringPolicy
    from agents.integrations.torchrl.modules import SelfPlayEnv, make_actor, make_critic

    torch.manual_seed(0)
    policy = MoveScoringPolicy(state_layers=(64,), head_layers=(32,), hand_after=True)
    actor, critic = make_actor(policy), make_critic(policy)
    collector = Collector(SelfPlayEnv(8, seed=5, reward_scale=1.0),
                          lambda td: actor(td).exclude("logits", "mask", inplace=True), frames_per_batch=8 * 40,
                          total_frames=-1, exploration_type=ExplorationType.RANDOM)
    data = next(iter(collector))
    collector.shutdown()
    traj, _ = regroup(data, None)
    assert traj is not None and traj.batch_size[0] > 0
    batch = with_advantages(traj, critic, GAE(gamma=1.0, lmbda=0.95, value_network=None, time_dim=0))
    batch = batch.exclude("next_row", "next", "seat")
    loss = ClipPPOLoss(actor, critic, entropy_coeff=0.0, critic_coeff=0.5, loss_critic_type="l2")
    optim = torch.optim.Adam(policy.parameters(), lr=3e-3)

    def total():
        out = loss(batch.clone())
        return out["loss_objective"] + out["loss_critic"]

    before = float(total())
    for _ in range(10):
        t = total()
        optim.zero_grad()
        t.backward()
        optim.step()
    assert float(total()) < before


def test_options_of_the_old_wrapper_are_warned_about_not_refused(tmp_path):
    from agents.integrations.torchrl.learner import check_options

    with pytest.warns(FutureWarning, match="opponents.*ignored"):
        o = check_options({"opponents": ["rule"], "collectors": 2, "learning_rate": 1e-4})
    assert "opponents" not in o and o["learning_rate"] == 1e-4


def test_the_learners_actor_is_the_dense_actors_distribution_over_the_legal_moves_only():
    """make_legal_actor draws legal action ids, with the log-probabilities and entropies of make_actor's
    MaskedCategorical over the whole 24,648-wide row, and the same greedy move."""
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    from agents.integrations.move_policy import MoveScoringPolicy
    from agents.integrations.torchrl.modules import SelfPlayEnv, make_actor, make_legal_actor

    torch.manual_seed(1)
    policy = MoveScoringPolicy(state_layers=(64,), head_layers=(32,), hand_after=True)
    env = SelfPlayEnv(6, seed=3)
    td = env.rollout(40, break_when_any_done=False)[:, -1]  # (states deep in their hands: play, many moves)
    dense, legal = make_actor(policy), make_legal_actor(policy)
    out = legal(td.clone())
    mask = td["action_mask"]
    assert mask[torch.arange(6), out["action"]].all()
    d_dense, d_legal = dense.get_dist(td.clone()), legal.get_dist(td.clone())
    torch.testing.assert_close(out["action_log_prob"], d_dense.log_prob(out["action"]), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(d_legal.entropy(), d_dense.entropy(), rtol=1e-4, atol=1e-5)
    with set_exploration_type(ExplorationType.MODE):
        assert torch.equal(legal(td.clone())["action"], dense(td.clone())["action"])
