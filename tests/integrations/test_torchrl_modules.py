"""TorchRL adapter (agents/integrations/torchrl/modules.py): the actor and critic are the move-scoring
policy's, the self-play env is the batched game, each decision's return is its own seat's score, PPO moves
the policy the right way, and train() checkpoints, resumes and exports what agents.load seats."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torchrl")
import torch  # noqa: E402
from tensordict import TensorDict  # noqa: E402

from agents.integrations.move_policy import MoveScoringPolicy  # noqa: E402
from agents.integrations.torchrl.modules import (  # noqa: E402
    GumbelMaskedCategorical, SelfPlayEnv, make_actor, make_critic, seat_returns,
)

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


def test_the_actor_and_critic_are_the_policys_and_sample_legal_moves():
    policy = small_policy()
    env = SelfPlayEnv(8, seed=1)
    td = env.reset()
    actor, critic = make_actor(policy), make_critic(policy)
    out = actor(td.clone())
    mask = td["action_mask"]
    assert mask[torch.arange(8), out["action"]].all()  # every sample legal
    logits, value = policy(td["observation"], mask)
    legal = mask
    torch.testing.assert_close(out["logits"][legal], logits[legal])
    dist = torch.distributions.Categorical(logits=logits)
    torch.testing.assert_close(out["action_log_prob"], dist.log_prob(out["action"]), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(critic(td.clone())["state_value"].squeeze(-1), value, rtol=1e-5, atol=1e-6)


def test_gumbel_sampling_is_the_masked_categorical_distribution():
    """Draws of GumbelMaskedCategorical fall on legal ids only, with MaskedCategorical's probabilities
    (chi-square on 20,000 draws, fixed seed, below 16.27: p > 0.001 at 3 degrees of freedom, the most
    here), and its log-probs are MaskedCategorical's."""
    from torchrl.modules import MaskedCategorical

    torch.manual_seed(3)
    logits = torch.tensor([[0.5, 2.0, -1.0, 0.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    mask = torch.tensor([[True, True, False, True, True, False], [False, True, False, False, False, True]])
    fast, ref = GumbelMaskedCategorical(logits=logits, mask=mask), MaskedCategorical(logits=logits, mask=mask)
    draws = fast.sample((20000,))
    assert draws.shape == (20000, 2) and fast.sample().shape == (2,)
    for row in range(2):
        counts = torch.bincount(draws[:, row], minlength=6)
        assert (counts[~mask[row]] == 0).all()
        expected = ref.probs[row][mask[row]].double() * 20000
        chi2 = float(((counts[mask[row]].double() - expected) ** 2 / expected).sum())
        assert chi2 < 16.27, (row, counts, expected)
    x = torch.tensor([1, 5])
    assert torch.allclose(fast.log_prob(x), ref.log_prob(x))


def test_self_play_env_is_the_batched_game():
    """TorchRL's spec check passes; a random rollout: every hand's rewards sum to 0 (R19), the acting seat
    of each step is the batched env's, and a table's next observation after its hand ended is a new hand."""
    from torchrl.envs.utils import check_env_specs

    env = SelfPlayEnv(4, seed=2)
    check_env_specs(env)
    env = SelfPlayEnv(4, seed=2)
    data = env.rollout(150, break_when_any_done=False)
    reward, done = data["next", "reward"], data["next", "done"][..., 0]
    assert done.sum() >= 4
    assert torch.allclose(reward.sum(-1), torch.zeros(reward.shape[:-1]), atol=1e-6)
    assert (reward[~done] == 0).all()
    assert set(data["seat"].unique().tolist()) == {0, 1, 2}


def test_seat_returns_gives_each_decision_its_own_seats_score_and_drops_unfinished_hands():
    """One table, five decisions by seats 0 1 2 0 1; the hand ends after the third with scores (+2, -4, +2):
    the first three get +2, -4, +2 (their own seats'); the last two (a hand still running) are left out."""
    T = 5
    reward = torch.zeros(1, T, 3)
    reward[0, 2] = torch.tensor([2.0, -4.0, 2.0])
    done = torch.zeros(1, T, 1, dtype=torch.bool)
    done[0, 2] = True
    data = TensorDict({"seat": torch.tensor([[0, 1, 2, 0, 1]]), "action": torch.arange(T)[None],
                       "next": TensorDict({"reward": reward, "done": done}, batch_size=(1, T))}, batch_size=(1, T))
    flat, ret = seat_returns(data)
    assert flat["action"].tolist() == [0, 1, 2]
    assert ret.tolist() == [2.0, -4.0, 2.0]


def test_ppo_updates_raise_the_probability_of_the_move_with_positive_advantage():
    """One decision (the first bid: four legal moves), each move taken four times; the advantage is +1 for
    one move and -1 for the others: ClipPPOLoss's updates raise that move's probability, lower the others'."""
    from torchrl.objectives import ClipPPOLoss

    policy = small_policy(3)
    actor, critic = make_actor(policy), make_critic(policy)
    one = SelfPlayEnv(1, seed=4).reset()
    legal = one["action_mask"][0].nonzero().squeeze(-1)
    assert legal.numel() == 4
    td = one.expand(16).clone()
    td.set("action", legal.repeat(4))
    with torch.no_grad():
        logits, _ = policy(td["observation"], td["action_mask"])
        before = torch.distributions.Categorical(logits=logits[0]).probs[legal]
    td.set("action_log_prob", torch.distributions.Categorical(logits=logits).log_prob(td["action"]))
    good = td["action"] == legal[1]
    td.set("advantage", torch.where(good, 1.0, -1.0).unsqueeze(-1))
    td.set("value_target", torch.zeros(16, 1))
    loss = ClipPPOLoss(actor, critic, entropy_bonus=False, normalize_advantage=False)
    optim = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for _ in range(5):
        out = loss(td.clone())
        optim.zero_grad()
        out["loss_objective"].backward()
        optim.step()
    with torch.no_grad():
        after = torch.distributions.Categorical(logits=policy(td["observation"], td["action_mask"])[0][0]).probs[legal]
    assert after[1] > before[1] * 1.02  # (PPO's clip keeps the ratio near 1.2 at most)
    assert (after[[0, 2, 3]] < before[[0, 2, 3]]).all()


def test_a_truncated_learner_state_on_resume_is_one_line_not_a_traceback(tmp_path, capsys):
    import train as cli

    run = tmp_path / "run"
    sets = ["--set", "max_seconds=0", "--set", "max_decisions=256", "--set", "eval_deals=1", "--set", "eval_opponents=[random]",
            "--set", "options.num_envs=8", "--set", "options.decisions_per_batch=256"]
    assert cli.main(["--config", "torchrl", "--run-dir", str(run), "--no-progress", *sets]) == 0
    state = run / "torchrl_state.pt"
    state.write_bytes(state.read_bytes()[:100])
    capsys.readouterr()
    more = json.loads((run / "state.json").read_text())["steps"] + 256
    assert cli.main(["--resume", str(run), "--set", f"max_decisions={more}", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "cannot resume" in err and "learner state does not load" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
