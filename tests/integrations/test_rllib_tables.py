"""RLlib's vector env over the batched game (agents/integrations/rllib_tables.py, in the RLlib venv: make test): its
tables step as PettingZoo envs (make_env) dealt the same hands, fed the same actions, for every reward; a bad
action is refused with nothing changed; a run through its env runner counts each decision once."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
from agents.integrations.rllib_module import MODULE_ID, decisions_sampled, make_env, train  # noqa: E402
from agents.integrations.rllib_tables import DECISIONS, RLlibTables  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("reward", ["score", "win", "sign_play"])
def test_the_tables_step_as_pettingzoo_envs_dealt_the_same_hands(reward):
    B = 4
    tables = RLlibTables(B, reward=reward, reward_scale=0.5, score_scale=4.0)
    obs, infos = tables.reset(seed=7)
    assert len(obs) == len(infos) == B
    config = {"reward": reward, "reward_scale": 0.5, "score_scale": 4.0}
    envs = [make_env(config) for _ in range(B)]
    # (slot b of the batched env deals as an AEC env seeded with its slot seed: the same hands)
    expected = [envs[b].reset(seed=int(tables.game.slot_seed(b)))[0] for b in range(B)]
    rng = np.random.default_rng(0)
    ended, hands, rewarded = [False] * B, 0, 0
    for _ in range(300):
        actions = []
        for b in range(B):
            if ended[b]:
                actions.append({})  # (the reset step: no agent acts)
                continue
            (agent, o), = obs[b].items()
            (want_agent, want), = expected[b].items()
            assert agent == want_agent
            assert o["observations"].dtype == np.float32 and o["legal"].dtype == np.int32
            np.testing.assert_array_equal(o["observations"], want["observations"])
            np.testing.assert_array_equal(o["legal"], want["legal"])
            legal = o["legal"][o["legal"] >= 0]
            actions.append({agent: int(rng.choice(legal))})
        obs, rew, term, trunc, _ = tables.step(actions)
        for b in range(B):
            if ended[b]:
                expected[b] = envs[b].reset()[0]
                assert rew[b] == {a: 0.0 for a in tables.envs[b].possible_agents} and not term[b]["__all__"]
                ended[b] = False
                continue
            want_obs, want_rew, want_term, want_trunc, _ = envs[b].step(actions[b])
            assert sorted(obs[b]) == sorted(want_obs)
            assert (rew[b], term[b], trunc[b]) == (want_rew, want_term, want_trunc)
            if term[b]["__all__"]:
                ended[b], hands = True, hands + 1
                rewarded += any(r != 0 for r in rew[b].values())
                for o in obs[b].values():  # (the finished position is gone: a blank observation, no legal move)
                    assert not o["observations"].any() and (o["legal"] == -1).all()
            else:
                expected[b] = want_obs
    assert hands >= 8 and rewarded >= 4


def test_a_missing_or_illegal_action_is_refused_and_nothing_changes():
    tables = RLlibTables(3, reward="win")
    obs, _ = tables.reset(seed=1)
    before = tables.game.state_dict()["arrays"]
    good = [{a: int(o["legal"][0])} for d in obs for a, o in d.items()]
    with pytest.raises(ValueError, match="table 1: player_"):
        tables.step([good[0], {}, good[2]])
    with pytest.raises(ValueError, match="3 action dicts"):
        tables.step(good[:2])
    (agent, o), = obs[2].items()
    bad = int(np.setdiff1d(np.arange(24648), o["legal"])[0])
    with pytest.raises(ValueError, match="illegal action"):
        tables.step([good[0], good[1], {agent: bad}])
    after = tables.game.state_dict()["arrays"]
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    obs2, *_ = tables.step(good)  # (and the tables still step)
    assert len(obs2) == 3
    with pytest.raises(ValueError, match="reward"):
        RLlibTables(2, reward="wins")


def test_a_run_on_the_tables_counts_each_decision_once(tmp_path):
    """The runner's own count of the shared module's actions: at most one an env step (one seat acts at a table
    step), fewer than RLlib's count of observations (2 a hand more), and what train() adds up."""
    import json

    import ray
    import torch
    from ray.tune.registry import register_env

    from agents.integrations.rllib_module import build_config

    torch.set_num_threads(1)
    register_env("ddz_rllib", make_env)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR")
    algo = build_config(num_envs=8, batch=256, minibatch=128, epochs=1, state_layers=(32,), head_layers=(16,),
                        reward="win", vector_env=True).build_algo()
    try:
        got = [algo.train()["env_runners"] for _ in range(3)]
    finally:
        algo.stop()
    decisions = sum(r[DECISIONS][MODULE_ID] for r in got)
    env_steps = sum(r["num_env_steps_sampled"] for r in got)
    hands = sum(r.get("num_episodes", 0) for r in got)
    # (a table's last actions of an iteration are counted when their seats are observed again: at most 2 a table)
    assert env_steps - 2 * 8 <= decisions <= env_steps and hands >= 1
    assert sum(r["num_module_steps_sampled"][MODULE_ID] for r in got) >= decisions + 2 * hands
    assert [decisions_sampled({"env_runners": r}) for r in got] == [r[DECISIONS][MODULE_ID] for r in got]

    opts = dict(num_envs=8, batch=256, minibatch=128, epochs=1, state_layers=(32,), head_layers=(16,),
                progress_seconds=1e9, reward="win")
    out = train(2, tmp_path / "v", seed=2, progress=False, vector_env=True, **opts)
    assert 0 < out["steps"] == json.loads((tmp_path / "v" / "state.json").read_text())["steps"]
    assert train(2, tmp_path / "p", seed=2, progress=False, vector_env=False, **opts)["steps"] > 0
