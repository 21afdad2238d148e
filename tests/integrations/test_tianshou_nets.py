"""Tianshou adapter (agents/integrations/tianshou/nets.py): the actor and critic are the move-scoring
policy's in Tianshou's signatures, Tianshou's PPO samples only legal moves and moves the policy the right
way, and train() checkpoints, resumes and exports what agents.load seats; the example learns."""
from __future__ import annotations


import numpy as np
import pytest

pytest.importorskip("tianshou")
import torch  # noqa: E402
from tianshou.data import Batch  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode  # noqa: E402

from agents.integrations.move_policy import MoveScoringPolicy  # noqa: E402
from agents.integrations.seat_env import DouDizhuSeatEnv  # noqa: E402
from agents.integrations.tianshou.nets import Actor, Critic, MaskedSeatEnv, make_ppo, seat_env  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def small_policy(seed=0) -> MoveScoringPolicy:
    torch.manual_seed(seed)
    return MoveScoringPolicy(state_layers=(64,), head_layers=(32,), hand_after=True)


def observations(n=6, seed=0):
    """``n`` Tianshou observation rows from seat envs at different decisions."""
    env = seat_env("random")
    rows, (obs, _) = [], env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while len(rows) < n:
        rows.append(obs)
        legal = np.flatnonzero(obs["mask"])
        obs, _, term, _, _ = env.step(int(rng.choice(legal)))
        if term:
            obs, _ = env.reset()
    return Batch(obs=np.stack([r["obs"] for r in rows]), mask=np.stack([r["mask"] for r in rows]))


def test_actor_scores_the_legal_moves_only_and_its_distribution_is_the_dense_masked_one():
    """The actor's logits are (B, K) over each row's legal moves (K the longest legal set, not 24,648); the
    distribution over them gives every action id the dense masked softmax's log-probability and entropy,
    draws only legal ids, and its mode is the dense argmax; the critic is the value head."""
    policy = small_policy()
    obs = observations()
    actor = Actor(policy)
    logits, state = actor(obs, state="s")
    counts = obs.mask.sum(1)
    assert state == "s" and logits.shape == (6, counts.max())
    dist = actor.dist(logits)
    dense, value = policy(torch.as_tensor(obs.obs), torch.as_tensor(obs.mask))
    ref = torch.distributions.Categorical(logits=dense)
    for row in range(6):
        legal = torch.from_numpy(np.flatnonzero(obs.mask[row]))
        ids = legal.new_full((6,), int(legal[0]))
        ids[row] = legal[-1]
        assert torch.allclose(dist.log_prob(ids)[row], ref.log_prob(ids)[row], atol=1e-5)
    assert torch.allclose(dist.entropy(), ref.entropy(), atol=1e-4)
    assert torch.equal(dist.mode, dense.argmax(1))
    draws = dist.sample((50,))
    assert all(obs.mask[r, int(a)] for r in range(6) for a in draws[:, r])
    assert torch.isinf(dist.log_prob(torch.full((6,), 24_000))).all()  # an id that is no candidate
    assert torch.equal(Critic(policy)(obs), value.reshape(-1, 1))
    # rows of different legal counts are padded: the gradients stay finite through the padding
    (dist.entropy().sum() + dist.log_prob(dist.mode).sum()).backward()
    assert all(torch.isfinite(p.grad).all() for p in policy.parameters() if p.grad is not None)


def test_bid_epsilon_mixes_uniform_into_the_bidding_rows_only_and_the_entropy_stays_the_policys():
    from agents.dmc.model import BIDDING_NET
    from agents.integrations.move_policy import net_of_planes

    policy = small_policy()
    torch.manual_seed(1)  # (away from the uniform softmax a fresh policy starts at)
    with torch.no_grad():
        for w in policy.parameters():
            w.add_(0.3 * torch.randn_like(w))
    obs = observations(12)
    plain, mixed = Actor(policy), Actor(policy, bid_epsilon=0.4)
    with torch.no_grad():
        a, b = plain.dist(plain(obs)[0]), mixed.dist(mixed(obs)[0])
    bidding = net_of_planes(torch.as_tensor(obs.obs).reshape(12, -1).float()) == BIDDING_NET
    assert bidding.any() and (~bidding).any()
    n = torch.as_tensor(obs.mask.sum(1)).unsqueeze(1)
    assert torch.allclose(b.probs[bidding], (0.6 * a.probs + 0.4 / n)[bidding] * a.valid[bidding], atol=1e-6)
    assert torch.allclose(b.probs[~bidding], a.probs[~bidding], atol=1e-6)
    assert torch.equal(b.mode, a.mode)
    # the entropy bonus is the policy's own, not the mixture's (higher wherever the policy is not uniform)
    assert torch.allclose(b.entropy(), a.entropy(), atol=1e-6)
    mixture = torch.distributions.Categorical(logits=b.logits[bidding]).entropy()
    assert (mixture >= a.entropy()[bidding] - 1e-6).all() and (mixture > a.entropy()[bidding] + 1e-3).any()


def test_bid_entropy_coeff_weighs_the_bids_entropy_apart_from_plays():
    """``bid_entropy_coeff`` reaches Tianshou's loss as its other learners': PPO's one ``ent_coef`` is the larger
    coefficient and each row's entropy is weighted so that bids get theirs and play its own."""
    from agents.dmc.model import BIDDING_NET
    from agents.integrations.move_policy import net_of_planes

    policy = small_policy()
    env = MaskedSeatEnv(DouDizhuSeatEnv(opponents="random", seat=0))
    ppo = make_ppo(policy, env.action_space, ent_coef=0.01, bid_entropy_coeff=0.2)
    assert ppo.ent_coef == pytest.approx(0.2)
    obs = observations(12)
    actor = ppo.policy.actor
    plain = Actor(policy)
    with torch.no_grad():
        weighted, base = actor.dist(actor(obs)[0]), plain.dist(plain(obs)[0])
    bidding = net_of_planes(torch.as_tensor(obs.obs).reshape(12, -1).float()) == BIDDING_NET
    assert bidding.any() and (~bidding).any()
    assert torch.allclose(weighted.entropy()[bidding], base.entropy()[bidding], atol=1e-6)
    assert torch.allclose(weighted.entropy()[~bidding], 0.05 * base.entropy()[~bidding], atol=1e-6)
    assert make_ppo(policy, env.action_space, ent_coef=0.01).ent_coef == pytest.approx(0.01)  # (None: the same)


def test_ppo_samples_legal_moves_and_its_update_raises_a_positive_advantage_move():
    """Tianshou's PPO over the policy: its sampled actions are legal; one minibatch in which one move of
    the first bid has advantage +1 and the others -1 raises that move's probability."""
    policy = small_policy(3)
    env = MaskedSeatEnv(DouDizhuSeatEnv(opponents="random", seat=0))
    ppo = make_ppo(policy, env.action_space, learning_rate=1e-2)
    obs, _ = env.reset(seed=4)
    one = Batch(obs=obs["obs"][None], mask=obs["mask"][None])
    out = [ppo.policy(Batch(obs=one, info=Batch())) for _ in range(20)]
    assert all(type(o.dist).__name__ == "CandidateCategorical" for o in out)  # (over the legal moves only)
    acts = [int(o.act[0]) for o in out]
    assert all(obs["mask"][a] for a in acts)
    legal = np.flatnonzero(obs["mask"])
    before = torch.softmax(Actor(policy)(one)[0][0], -1).detach()  # (the legal moves, in id order)
    acts = np.tile(legal, 4)
    with torch.no_grad():
        old = ppo.policy(Batch(obs=Batch(obs=np.repeat(one.obs, 16, 0), mask=np.repeat(one.mask, 16, 0)),
                               info=Batch())).dist.log_prob(torch.as_tensor(acts))
    batch = Batch(obs=Batch(obs=np.repeat(one.obs, 16, 0), mask=np.repeat(one.mask, 16, 0)), info=Batch(),
                  act=torch.as_tensor(acts), logp_old=old, adv=torch.where(torch.as_tensor(acts) == int(legal[1]),
                                                                           1.0, -1.0),
                  returns=torch.zeros(16), v_s=torch.zeros(16))
    ppo.advantage_normalization = False
    with policy_within_training_step(ppo.policy), torch_train_mode(ppo):
        stats = ppo._update_with_batch(batch, batch_size=16, repeat=5)  # Tianshou's own PPO step
    assert stats.gradient_steps == 5
    after = torch.softmax(Actor(policy)(one)[0][0], -1).detach()
    assert after[1] > before[1] * 1.02 and (after[[0, 2, 3]] < before[[0, 2, 3]]).all()


def test_seat_tables_collect_legal_moves_whose_episodes_return_the_scaled_scores():
    """Tianshou's own Collector over SeatTables (one batched env of 8 tables): every stored action is one of
    its observation's padded legal ids, every finished episode's return is 0.05 times the learning seat's
    score, and the actor scores padded ids exactly as the dense mask of the same positions."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer

    from agents.integrations.tianshou.nets import SeatTables

    policy = small_policy(2)
    envs = SeatTables(8, ["random", "rule"], seed=3)
    algo = make_ppo(policy, envs.action_space[0], bid_epsilon=0.1)
    buffer = VectorReplayBuffer(8 * 80, 8)
    collector = Collector[CollectStats](algo, envs, buffer)
    collector.reset()
    scores: list[float] = []
    orig = envs.step

    def step(action, id=None):
        out = orig(action, id)
        scores.extend(info["score"] for info in out[4] if "score" in info)
        return out

    envs.step = step
    with torch_train_mode(algo, False), torch.no_grad():
        stats = collector.collect(n_step=8 * 40)
    data = buffer[np.arange(len(buffer))]
    legal = np.asarray(data.obs.legal)
    acts = np.asarray(data.act)
    assert len(buffer) == 320 and all(a in legal[i][legal[i] >= 0] for i, a in enumerate(acts))
    returns = np.asarray(stats.returns).reshape(-1)
    assert returns.size == len(scores) > 10
    np.testing.assert_allclose(np.sort(returns), np.sort(0.05 * np.asarray(scores)), atol=1e-5)
    # the padded ids and a dense mask of the same rows give the actor the same logits
    rows = Batch(obs=np.asarray(data.obs.obs[:16]), legal=legal[:16])
    mask = np.zeros((16, 24648), bool)
    for i in range(16):
        mask[i, legal[i][legal[i] >= 0]] = True
    actor = Actor(policy)
    with torch.no_grad():
        a, b = actor(rows)[0], actor(Batch(obs=rows.obs, mask=mask))[0]
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="steps all 8 tables together"):
        envs.step(np.zeros(2, np.int64), [0, 1])
