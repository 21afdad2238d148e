"""RLlib adapter (agents/integrations/rllib/module.py, run in the RLlib venv: make test): the RLModule's
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
from agents.dmc.model import BIDDING_NET  # noqa: E402
from agents.integrations.move_policy import net_of_planes  # noqa: E402
from agents.integrations.rllib.module import (LEGAL_WIDTH, MODULE_ID, FixedAgentRLModule, MoveScoringRLModule,  # noqa: E402
                                             RLlibObs, SeatsToModules, SplitTargetsEnv, build_config, decisions_sampled, make_env,
                                             train)

pytestmark = [pytest.mark.integration, pytest.mark.rllib]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One short self-play run, resumed once: (its folder, the two results)."""
    torch.set_num_threads(1)
    d = tmp_path_factory.mktemp("rllib") / "run"
    opts = dict(num_envs=8, decisions_per_batch=256, minibatch=128, epochs=1, state_layers=(64,), head_layers=(32,), progress_seconds=1e9,
                opponents=["rule"], opponent_share=0.5)
    first = train(float("inf"), d, decisions=256, seed=1, progress=False, **opts)
    second = train(float("inf"), d, decisions=first["steps"] + 256, seed=1, resume=True, progress=False, **opts)
    return d, first, second


def observations(n=5):
    env = make_env()
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    rows = []
    while len(rows) < n:
        (agent, o), = obs.items()
        rows.append(o)
        legal = o["legal"][o["legal"] >= 0]
        obs, _, term, _, _ = env.step({agent: int(rng.choice(legal))})
        if term["__all__"]:
            obs, _ = env.reset()
    return {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in rows[0]}


def done_obs(obs):
    """``obs`` with no legal id in any row (a seat's last observation after its hand ended)."""
    done = {k: v.clone() for k, v in obs.items()}
    done["legal"][:] = -1
    return done


def test_the_module_scores_legal_moves_only_and_its_value_is_the_policys():
    env = make_env()
    module = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                 action_space=env.action_space["player_0"],
                                 model_config={"state_layers": [64], "head_layers": [32]})
    obs = observations()
    out = module.forward_exploration({Columns.OBS: obs})
    inputs = out[Columns.ACTION_DIST_INPUTS]
    legal = obs["legal"].long()
    valid = legal >= 0
    assert inputs.shape == (5, 2 * LEGAL_WIDTH + 2)
    assert torch.equal(inputs[:, LEGAL_WIDTH:2 * LEGAL_WIDTH].long(), legal)
    assert torch.equal(inputs[:, -2], torch.ones(5))  # (entropy weights: one coefficient for bids and play)
    assert torch.equal(inputs[:, -1], torch.zeros(5))  # (no bid exploration)
    logp = inputs[:, :LEGAL_WIDTH]
    assert (logp[~valid] < -1e30).all() and (logp[valid] > -1e30).all()
    # the same probabilities as the policy's dense logits, in the env's action ids
    mask = torch.zeros(5, 24648, dtype=torch.bool)
    mask[valid.nonzero(as_tuple=True)[0], legal[valid]] = True
    dense, value = module.policy(obs["observations"], mask)
    expected = torch.log_softmax(dense, dim=1).gather(1, legal.clamp(min=0))
    assert torch.allclose(logp[valid], expected[valid], atol=1e-5)
    assert torch.allclose(module.compute_values({Columns.OBS: obs}), value)
    # training's pass gives the values with the logits (PPO's loss hands them back to compute_values); the
    # exploration pass does not (its outputs are stored with every step)
    train_out = module.forward_train({Columns.OBS: obs})
    assert torch.allclose(train_out[Columns.EMBEDDINGS], value) and Columns.EMBEDDINGS not in out
    assert torch.allclose(train_out[Columns.ACTION_DIST_INPUTS], inputs)
    assert module.compute_values({Columns.OBS: done_obs(obs)}, embeddings=train_out[Columns.EMBEDDINGS]) is \
        train_out[Columns.EMBEDDINGS]
    dist = module.get_exploration_action_dist_cls().from_logits(inputs)
    draws = dist.sample(sample_shape=(200,))
    assert type(dist).__name__ == "LegalMovesCategorical" and draws.shape == (200, 5)
    assert bool(mask.gather(1, draws.T).all())  # draws are legal action ids
    assert torch.allclose(dist.logp(draws[0]), expected.gather(1, (legal == draws[0].unsqueeze(1)).float().argmax(1,
                          keepdim=True)).squeeze(1), atol=1e-5)
    assert torch.equal(dist.to_deterministic().sample(), dense.argmax(1))
    # a seat's last observation after its hand ended has no legal id: its value is still read
    done = done_obs(obs)
    assert module.compute_values({Columns.OBS: done}).shape == (5,)
    assert torch.isfinite(module.get_train_action_dist_cls().from_logits(
        module.forward_train({Columns.OBS: done})[Columns.ACTION_DIST_INPUTS]).entropy()).all()


def test_bid_exploration_mixes_uniform_into_bidding_rows_only_and_the_entropy_stays_the_policys():
    env = make_env()
    obs = observations(12)
    module = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                 action_space=env.action_space["player_0"],
                                 model_config={"state_layers": [64], "head_layers": [32], "bid_epsilon": 0.5})
    torch.manual_seed(1)  # (away from the uniform softmax a fresh policy starts at)
    with torch.no_grad():
        for w in module.parameters():
            w.add_(0.3 * torch.randn_like(w))
    plain = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                action_space=env.action_space["player_0"],
                                model_config={"state_layers": [64], "head_layers": [32]})
    plain.load_state_dict(module.state_dict())
    cls = module.get_exploration_action_dist_cls()
    inputs = module.forward_exploration({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    mixed, own = cls.from_logits(inputs), cls.from_logits(plain.forward_exploration({Columns.OBS: obs})[
        Columns.ACTION_DIST_INPUTS])
    a, b = mixed._dist.logits, own._dist.logits
    # (the distribution works on the batch's widest legal set, not on LEGAL_WIDTH: the ids are packed left)
    assert a.shape == (12, int((obs["legal"] >= 0).sum(1).max())) and a.shape[1] < LEGAL_WIDTH
    valid = (obs["legal"] >= 0)[:, :a.shape[1]]
    bidding = net_of_planes(obs["observations"]) == BIDDING_NET
    assert bidding.any() and (~bidding).any()
    assert torch.equal(inputs[:, -1], torch.where(bidding, 0.5, 0.0))  # (the rows' exploration rate)
    n = valid.sum(1, keepdim=True)
    expected = torch.log(0.5 * b.exp() + 0.5 / n)
    assert torch.allclose(a[bidding][valid[bidding]], expected[bidding][valid[bidding]], atol=1e-5)
    assert torch.allclose(a[~bidding], b[~bidding])
    assert torch.allclose(a.exp().sum(1), torch.ones(12), atol=1e-5)
    draws = mixed.sample()  # samples and logp are the mixture's (PPO's ratio is over what was sampled) ...
    assert torch.allclose(mixed.logp(draws), a.gather(1, (obs["legal"][:, :a.shape[1]] == draws.unsqueeze(1)).float().argmax(
        1, keepdim=True)).squeeze(1), atol=1e-6)
    # ... the entropy bonus is the policy's own, below the mixture's wherever the policy is not uniform
    assert torch.allclose(mixed.entropy(), own.entropy(), atol=1e-6)
    mixture_entropy = torch.distributions.Categorical(logits=a[bidding]).entropy()
    assert (mixture_entropy >= own.entropy()[bidding] - 1e-6).all()
    assert (mixture_entropy > own.entropy()[bidding] + 1e-3).any()
    assert torch.equal(mixed.to_deterministic().sample(), own.to_deterministic().sample())
    # the loss's gradient is finite (play rows have epsilon 0: a log 0 in their padding once gave NaN)
    dist = cls.from_logits(module.forward_train({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS])
    (dist.logp(draws).sum() + dist.entropy().sum()).backward()
    grads = [w.grad for w in module.parameters() if w.grad is not None]
    assert grads and all(bool(torch.isfinite(g).all()) for g in grads)


def test_bid_entropy_coeff_weighs_the_entropy_of_bidding_rows_only():
    env = make_env()
    obs = observations(12)
    config = build_config(entropy_coeff=0.01, bid_entropy_coeff=0.05)
    assert config.entropy_coeff == pytest.approx(0.05)  # RLlib's one coefficient: the larger, play's weight 0.2
    model_config = config.rl_module_spec.rl_module_specs[MODULE_ID].model_config
    assert model_config["entropy_weights"] == pytest.approx([0.2, 1.0])
    module = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                 action_space=env.action_space["player_0"],
                                 model_config={**model_config, "state_layers": [64], "head_layers": [32]})
    plain = MoveScoringRLModule(observation_space=env.observation_space["player_0"],
                                action_space=env.action_space["player_0"],
                                model_config={"state_layers": [64], "head_layers": [32]})
    plain.load_state_dict(module.state_dict())
    cls = module.get_train_action_dist_cls()
    weighted = cls.from_logits(module.forward_train({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS])
    base = cls.from_logits(plain.forward_train({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS])
    bidding = net_of_planes(obs["observations"]) == BIDDING_NET
    assert bidding.any() and (~bidding).any()
    # RLlib's PPO loss takes entropy_coeff * entropy(): 0.05 in bidding rows, 0.01 elsewhere
    coef = config.entropy_coeff * weighted.entropy() / base.entropy().clamp(min=1e-12)
    assert torch.allclose(coef[bidding], torch.full_like(coef[bidding], 0.05))
    moving = ~bidding & (base.entropy() > 1e-6)
    assert moving.any() and torch.allclose(coef[moving], torch.full_like(coef[moving], 0.01))
    # the samples and probabilities are untouched
    draws = base.sample()
    assert torch.equal(weighted.logp(draws), base.logp(draws))
    with pytest.raises(ValueError, match="2050"):
        cls.from_logits(torch.zeros(2, 2 * LEGAL_WIDTH))
    with pytest.raises(ValueError, match=">= 0"):
        build_config(entropy_coeff=0.01, bid_entropy_coeff=-0.1)


def test_batches_too_small_for_the_tables_are_refused_before_the_run_folder_is_touched(tmp_path):
    from agents.integrations.rllib.module import train

    run = tmp_path / "run"
    with pytest.raises(ValueError, match="num_envs 128"):
        train(5, run, progress=False, num_envs=128, decisions_per_batch=256, minibatch=128)
    with pytest.raises(ValueError, match="minibatch 512 is larger than decisions_per_batch 256"):
        train(5, run, progress=False, num_envs=8, decisions_per_batch=256, minibatch=512)
    assert not run.exists()
    with pytest.raises(ValueError, match="num_envs 64"):
        build_config(num_envs=64, batch=128)


def test_the_widest_legal_set_found_fits_and_a_wider_one_is_refused():
    from ddz_env.legal import legal_ids_unchecked

    # (the widest of simulated annealing over hands of up to 20 cards: rllib.module.LEGAL_WIDTH's comment)
    assert legal_ids_unchecked(np.array([1, 1, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0]), 0).size == 519 < LEGAL_WIDTH

    class Wide:
        def observe(self, agent):
            return {"observation": np.zeros(1740, np.int8), "action_mask": np.ones(24648, np.int8)}

    wrapper = RLlibObs.__new__(RLlibObs)
    wrapper.env = Wide()
    with pytest.raises(ValueError, match="24648 legal moves, more than RLlib's fixed width 1024"):
        wrapper.observe("player_0")


def test_one_module_plays_all_three_seats():
    config = build_config()
    assert set(config.policies) == {MODULE_ID}
    assert {config.policy_mapping_fn(f"player_{s}", None) for s in range(3)} == {MODULE_ID}


def test_a_fixed_agent_module_takes_the_agents_move_and_is_never_trained():
    from agents.baselines.rule_agent import RuleAgent

    env = make_env()
    module = FixedAgentRLModule(observation_space=env.observation_space["player_0"],
                                action_space=env.action_space["player_0"], model_config={"agent": "rule"})
    obs = observations(40)
    planes = obs["observations"].numpy().reshape(-1, 29, 4, 15).astype(np.int8)
    legal = obs["legal"].numpy()
    rule = RuleAgent()
    expected = np.array([rule.decide(planes[i], legal[i][legal[i] >= 0].astype(np.int64)) for i in range(40)])
    assert len(set(net_of_planes(obs["observations"]).tolist())) > 1  # (bids and plays among the rows)
    inputs = module.forward_exploration({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    dist = module.get_exploration_action_dist_cls().from_logits(inputs)
    for _ in range(3):
        assert np.array_equal(dist.sample().numpy(), expected)
    assert np.array_equal(dist.to_deterministic().sample().numpy(), expected)
    assert torch.equal(dist.logp(torch.from_numpy(expected)), torch.zeros(40))
    config = build_config(num_envs=8, batch=256, minibatch=128, opponents=["rule"], opponent_share=0.5)
    assert set(config.policies) == {MODULE_ID, "opponent0"} and list(config.policies_to_train) == [MODULE_ID]
    with pytest.raises(ValueError, match="opponents 'self' is not taken"):
        build_config(opponents=["self", "rule"], opponent_share=0.5)


def test_opponent_seats_are_drawn_per_hand_and_kept_for_the_whole_hand():
    mapping = SeatsToModules(["opponent0", "opponent1"], share=0.5, seed=7)
    held = [mapping.seats(f"hand-{i}") for i in range(4000)]
    with_opponent = [h for h in held if h[0] is not None]
    assert 0.45 < len(with_opponent) / len(held) < 0.55
    assert {m for m, _ in with_opponent} == {"opponent0", "opponent1"}
    assert {len(seats) for _, seats in with_opponent} == {1, 2}
    assert all(seats == () for m, seats in held if m is None)

    class Episode:
        id_ = "hand-3"

    module, seats = mapping.seats("hand-3")
    for _ in range(2):  # (the same hand, asked again: RLlib asks once per chunk of an episode)
        got = [mapping(f"player_{s}", Episode()) for s in range(3)]
        assert got == [module if s in seats else MODULE_ID for s in range(3)]
    assert SeatsToModules([], 1.0).seats("hand-3") == (None, ())
    assert SeatsToModules(["opponent0"], 0.0).seats("hand-3") == (None, ())


def test_reward_win_makes_the_env_pay_plus_or_minus_one_and_a_bad_reward_is_refused_before_the_run(tmp_path):
    config = build_config(num_envs=8, batch=256, minibatch=128, reward="win", reward_scale=1.0)
    assert config.env_config == {"reward_scale": 1.0, "reward": "win", "score_scale": 8.0}
    env = make_env(config.env_config)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(1)
    total = {}
    while True:
        (agent, o), = obs.items()
        obs, rew, term, _, _ = env.step({agent: int(rng.choice(o["legal"][o["legal"] >= 0]))})
        for a, r in rew.items():
            total[a] = total.get(a, 0.0) + r
        if term["__all__"]:
            break
    assert sorted(total.values()) in ([-1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [0.0, 0.0, 0.0])  # (0: all passed)
    with pytest.raises(ValueError, match="reward"):
        train(5, tmp_path / "run", progress=False, num_envs=8, decisions_per_batch=256, minibatch=128, reward="wins")
    assert not (tmp_path / "run").exists()


def test_sign_play_gives_each_seats_bids_the_score_and_its_play_the_win_as_two_agents():
    """reward="sign_play": bids, doubles and redoubles act as bidder_i, play as player_i; at the end player_i
    gets sign(score) and bidder_i score / score_scale (both times reward_scale), the scores the AEC env's own."""
    import pettingzoo

    from ddz_env.rules import Phase

    config = build_config(num_envs=8, batch=256, minibatch=128, reward="sign_play", reward_scale=0.5,
                          score_scale=4.0)
    kinds = set()
    for seed in range(12):
        env = make_env(config.env_config)
        assert isinstance(env, SplitTargetsEnv)
        twin = pettingzoo.make("aec", "ddz/dou_dizhu-v0")  # (the same hand, stepped alongside: its scores)
        obs, _ = env.reset(seed=seed)
        twin.reset(seed=seed)
        rng = np.random.default_rng(seed)
        acted, total = set(), {}
        while True:
            (agent, o), = obs.items()
            seat = twin.agent_selection
            assert agent == (seat if twin.unwrapped.phase == Phase.PLAY else "bidder_" + seat[-1])
            with pytest.raises(ValueError, match=agent):  # (another agent's action: refused, nothing stepped)
                env.step({"bidder_9": 0})
            action = int(rng.choice(o["legal"][o["legal"] >= 0]))
            acted.add(agent)
            obs, rew, term, trunc, _ = env.step({agent: action})
            twin.step(action)
            for a, r in rew.items():
                total[a] = total.get(a, 0.0) + r
            if term["__all__"]:
                break
            assert rew == {a: 0.0 for a in obs} and len(obs) == 1
        scores = {a: twin.unwrapped.rewards[a] for a in twin.possible_agents}
        assert set(total) == acted == set(obs) and all(term[a] for a in acted) and not trunc["__all__"]
        for seat, score in scores.items():
            if "bidder_" + seat[-1] in acted:
                assert total["bidder_" + seat[-1]] == pytest.approx(score / 4.0 * 0.5)
            if seat in acted:
                assert total[seat] == pytest.approx(np.sign(score) * 0.5)
        kinds.add("played" if any(a.startswith("player_") for a in acted) else "void")
    assert "played" in kinds
    with pytest.raises(ValueError, match="reward='score'"):
        SplitTargetsEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", reward="win")))


def test_a_run_counts_the_trained_modules_sampled_decisions_once(run):
    import json

    d, first, second = run
    state = json.loads((d / "state.json").read_text())
    # rule holds one or two seats in half the hands: the shared module's decisions are fewer than the env
    # steps (RLlib's own num_module_steps_trained, counted before, was ~1x-2x the steps, never fewer)
    assert 0 < second["steps"] == state["steps"] < 256 * state["iterations"]
    assert decisions_sampled({"env_runners": {"num_module_steps_sampled": {MODULE_ID: 17, "opponent0": 5}}}) == 17
    with pytest.raises(KeyError, match="num_module_steps_sampled"):
        decisions_sampled({"learners": {MODULE_ID: {"num_module_steps_trained": 512}}})


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
