"""RLlib's vector env over the batched game: N tables of one :class:`~ddz_env.vector.VectorDouDizhu` stepped in
one call, instead of N PettingZoo envs stepped one by one (``train.py --config rllib``'s ``vector_env`` option).

==================================  ====================================================================
:class:`RLlibTables`                RLlib's ``VectorMultiAgentEnv``: ``step`` takes one action dict per
                                    table and returns one obs / reward / done dict per table, as RLlib's
                                    ``SyncVectorMultiAgentEnv`` over :func:`~.rllib_module.make_env` does
                                    (same agents, spaces, rewards and ends); the observations are built
                                    for all tables at once from the batched env's planes and compact
                                    legal sets (no 24,648-wide mask, no copy of every table's dict)
:class:`TablesEnvRunner`            RLlib's ``MultiAgentEnvRunner`` whose env is :class:`RLlibTables`
                                    (``config.env_runners(env_runner_cls=...)``)
==================================  ====================================================================

What differs from the PettingZoo route, on purpose:

* the deals: table ``b`` deals from ``VectorDouDizhu``'s slot generator (``slot_seed(b)``), not from a
  PettingZoo env seeded ``seed + b``;
* a hand's last observation (the one that comes with its final rewards) is all zeros with no legal move:
  the batched env deals the next hand in the same step, so the finished position is gone. RLlib reads
  that observation only for its value, which GAE multiplies by 0 at a terminal step.

Why: stepping 128 PettingZoo envs one by one was 7.5 s of a profiled 24.3 s of sampling (each env builds a
24,648 mask that ``RLlibObs`` turned back into ids, and the sync vector env deep-copies every observation).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu

from .move_policy import LEGAL_WIDTH

_SEATS = 3

#: one seat's observation (:class:`RLlibTables` and :class:`~.rllib_module.RLlibObs`): the planes, then the legal
#: ids and -1 after them (the compact legal set: 4 KB a step, not RLlib's masked dict's 24,648 float32 mask, 96 KB)
OBS_SPACE = spaces.Dict({
    "observations": spaces.Box(0.0, 1.0, (OBS_CELLS,), np.float32),
    "legal": spaces.Box(-1, NUM_ACTIONS - 1, (LEGAL_WIDTH,), np.int32),
})


def split_targets(score: float, score_scale: float, reward_scale: float) -> tuple[float, float]:
    """``reward="sign_play"``'s two ends of a seat's hand, ``(bidder_i's, player_i's)``: the score / ``score_scale``
    for its bids, doubles and redoubles, the sign of the score for its play, both times ``reward_scale`` (the one
    place :class:`RLlibTables` and :class:`~.rllib_module.SplitTargetsEnv` take them from)."""
    return float(score) / score_scale * reward_scale, float(np.sign(score)) * reward_scale


class _Table(MultiAgentEnv):
    """What RLlib's runner reads of one sub-env: its agents and their spaces. It holds no state (the tables'
    state is :class:`RLlibTables`'s), so one instance stands for every table."""

    def __init__(self, agents: list[str], obs_space: spaces.Space):
        super().__init__()
        self.possible_agents = list(agents)
        self.agents = list(agents)
        self.observation_spaces = {a: obs_space for a in agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)


class RLlibTables(VectorMultiAgentEnv):
    """``num_envs`` tables of one batched env as RLlib's ``VectorMultiAgentEnv`` (autoreset ``"next_step"``: the
    step after a hand's end returns the next hand's first observation for that table and ignores its action).

    Agents, observations and rewards are :func:`~.rllib_module.make_env`'s: ``player_0..2``, each observation
    ``{"observations": float32 (1740,), "legal": int32 (LEGAL_WIDTH,)}`` (the legal ids, then -1); the seat to
    act is observed with reward 0 until the hand ends, then all three seats get their reward (``reward``
    ``"score"`` or ``"win"``, times ``reward_scale``). With ``reward="sign_play"`` each seat is two agents,
    ``bidder_i`` (bids, doubles, redoubles; the score / ``score_scale``) and ``player_i`` (play; the sign of the
    score), and only those that acted in the hand get an end (as :class:`~.rllib_module.SplitTargetsEnv`)."""

    metadata = {"autoreset_mode": "next_step"}

    def __init__(self, num_envs: int, *, reward: str = "score", reward_scale: float = 1.0, score_scale: float = 8.0,
                 seed: int | None = None, rules: Any = None):
        super().__init__()
        if reward not in ("score", "win", "sign_play"):
            raise ValueError(f"RLlibTables: reward must be 'score', 'win' or 'sign_play', got {reward!r}")
        self.split = reward == "sign_play"
        self.reward_scale, self.score_scale = float(reward_scale), float(score_scale)
        self.game = VectorDouDizhu(num_envs, seed=seed, rules=rules, reward="score" if self.split else reward,
                                   reward_scale=1.0 if self.split else self.reward_scale)
        self.num_envs = B = self.game.num_envs
        # agent names by (in play, seat): without the split the same name in both rows
        players = [f"player_{s}" for s in range(_SEATS)]
        self._names = np.array([[f"bidder_{s}" for s in range(_SEATS)] if self.split else players, players],
                               dtype=object)
        agents = [*self._names[0], *players] if self.split else players
        table = _Table(agents, OBS_SPACE)
        self.envs = [table] * B
        self.single_observation_spaces = dict(table.observation_spaces)
        self.single_action_spaces = dict(table.action_spaces)
        self.single_observation_space = spaces.Dict(self.single_observation_spaces)
        self.single_action_space = spaces.Dict(self.single_action_spaces)
        self._agents = agents
        self._ended = np.zeros(B, bool)  # hands that ended on the last step: their next step is the reset
        self._acted = np.zeros((B, 2, _SEATS), bool)  # (split) which agents acted in the hand
        self._final = {"observations": np.zeros(OBS_CELLS, np.float32), "legal": np.full(LEGAL_WIDTH, -1, np.int32)}
        self._obs = self.game.reset()

    # ------------------------------------------------------------------ observations
    def _turn(self) -> np.ndarray:
        """(B,) the name of the agent to act at each table."""
        in_play = (self.game.phase == int(Phase.PLAY)).astype(np.int64)
        return self._names[in_play, self.game.current_player]

    def _views(self) -> tuple[np.ndarray, np.ndarray]:
        """Every table's observation of the seat to act: planes (B, 1740) float32 and padded legal ids (B,
        LEGAL_WIDTH) int32, new arrays each step (RLlib's episodes keep views of them)."""
        o = self._obs
        B = self.num_envs
        planes = o["observation"].reshape(B, -1).astype(np.float32)
        rows, ids, starts = o["legal_rows"], o["legal_ids"], o["legal_starts"]
        widest = int(np.diff(starts).max())
        if widest > LEGAL_WIDTH:
            b = int(np.diff(starts).argmax())
            raise ValueError(f"table {b} has {widest} legal moves, more than RLlib's fixed width {LEGAL_WIDTH} "
                             f"(rllib_module.LEGAL_WIDTH)")
        legal = np.full((B, LEGAL_WIDTH), -1, np.int32)
        legal[rows, np.arange(ids.size) - starts[rows]] = ids
        return planes, legal

    def _first(self) -> list[dict]:
        planes, legal = self._views()
        return [{a: {"observations": planes[b], "legal": legal[b]}} for b, a in enumerate(self._turn())]

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New hands at every table (``seed``: reseed every table's generator); ``(obs dicts, info dicts)``."""
        self._obs = self.game.reset(seed=seed)
        self._ended[:] = False
        self._acted[:] = False
        return self._first(), [{} for _ in range(self.num_envs)]

    def step(self, actions: list[dict]):
        """One action dict per table (``{agent to act: action id}``; ignored at a table whose hand ended on the
        last step). Returns per-table lists of obs, reward, terminated, truncated and info dicts. A missing
        or illegal action raises ``ValueError`` naming the table, and changes nothing."""
        B = self.num_envs
        if len(actions) != B:
            raise ValueError(f"RLlibTables.step takes {B} action dicts, one per table; got {len(actions)}")
        turn = self._turn()
        move = ~self._ended
        a = np.zeros(B, np.int64)
        for b in np.flatnonzero(move):
            act = actions[b].get(turn[b])
            if act is None:
                raise ValueError(f"RLlibTables: table {b}: {turn[b]} is to act; got actions for {sorted(actions[b])}")
            a[b] = int(act)
        in_play = (self.game.phase == int(Phase.PLAY))
        seat = self.game.current_player.copy()
        self._obs, rewards, done, info = self.game.step(a, active=None if move.all() else move)
        # (only now: an illegal action raised above and left the tables and their bookkeeping as they were)
        if self.split:
            idx = np.flatnonzero(move)
            self._acted[idx, in_play[idx].astype(np.int64), seat[idx]] = True
        planes, legal = self._views()
        turn = self._turn()
        obs, rew, term, trunc = [], [], [], []
        for b in range(B):
            if done[b]:
                o, r = self._end(b, rewards[b], info["final_scores"][b])
                obs.append(o)
                rew.append(r)
                term.append({**{k: True for k in o}, "__all__": True})
                trunc.append({**{k: False for k in o}, "__all__": False})
                continue
            a_b = turn[b]
            obs.append({a_b: {"observations": planes[b], "legal": legal[b]}})
            if self._ended[b]:  # (the reset step: as RLlib's sync vector env, every agent 0)
                rew.append({k: 0.0 for k in self._agents})
                term.append({**{k: False for k in self._agents}, "__all__": False})
                trunc.append({**{k: False for k in self._agents}, "__all__": False})
            else:  # (as PettingZooEnv and SplitTargetsEnv: the former names the agent in its dones too)
                rew.append({a_b: 0.0})
                going = {"__all__": False} if self.split else {a_b: False, "__all__": False}
                term.append(going)
                trunc.append(dict(going))
        self._ended = done & move
        return obs, rew, term, trunc, [{} for _ in range(B)]

    def _end(self, b: int, rewards: np.ndarray, score: np.ndarray) -> tuple[dict, dict]:
        """A hand's end at table ``b``: (obs, reward) dicts of the agents that get one."""
        if not self.split:  # (all three, as PettingZoo's env: its last() of every seat)
            return ({f"player_{s}": self._final for s in range(_SEATS)},
                    {f"player_{s}": float(rewards[s]) for s in range(_SEATS)})
        obs, rew = {}, {}
        for s in range(_SEATS):
            for k, target in enumerate(split_targets(score[s], self.score_scale, self.reward_scale)):
                if self._acted[b, k, s]:
                    name = self._names[k, s]
                    obs[name], rew[name] = self._final, target
        self._acted[b] = False
        return obs, rew

    def close_extras(self, **kwargs: Any) -> None:
        pass


#: the env runner's metric of each module's decisions in a ``sample()`` call (its actions, each once), beside RLlib's
#: ``num_module_steps_sampled``
DECISIONS = "decisions_sampled"


class TablesEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner, its env an :class:`RLlibTables` of ``num_envs_per_env_runner`` tables built
    from ``env_config`` (``reward``, ``reward_scale``, ``score_scale``); the rest is RLlib's, except that the
    sampled-step counters (env, agent and module steps, episodes) are summed over a ``sample()`` call and
    logged once at its end, with the same names and reductions: RLlib logs four metrics per agent per
    table step, 8.7 s of 84 in a profiled run at the defaults. (A private method of ray 2.60's runner, the
    version the ``rllib`` extra pins; ``decisions_sampled`` reads the module counts, and its test checks them.)"""

    def __init__(self, *args: Any, **kwargs: Any):
        self._counts: dict = {}
        super().__init__(*args, **kwargs)

    def _increase_sampled_metrics(self, num_steps, next_obs, episode):
        c = self._counts
        c["env"] = c.get("env", 0) + num_steps
        if episode.is_done:
            c["episodes"] = c.get("episodes", 0) + 1
        for aid in next_obs:
            k = ("agent", str(aid))
            c[k] = c.get(k, 0) + 1
            module = episode.module_for(aid)
            k = ("module", module)
            c[k] = c.get(k, 0) + 1
            # (RLlib counts every observation after the first as a step, so a seat's first observation that
            # comes with another seat's step, and every seat's last one, count too: 2 a hand more than the
            # actions; a decision is an observation that closes an action of the agent's)
            if len(episode.agent_episodes[aid]) > 0:
                k = ("decisions", module)
                c[k] = c.get(k, 0) + 1
        return num_steps

    def _log_counts(self) -> None:
        from ray.rllib.utils.metrics import (NUM_AGENT_STEPS_SAMPLED, NUM_AGENT_STEPS_SAMPLED_LIFETIME,
                                             NUM_ENV_STEPS_SAMPLED, NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_EPISODES,
                                             NUM_EPISODES_LIFETIME, NUM_MODULE_STEPS_SAMPLED,
                                             NUM_MODULE_STEPS_SAMPLED_LIFETIME)

        c, self._counts = self._counts, {}
        log = self.metrics.log_value
        if "env" in c:
            log(NUM_ENV_STEPS_SAMPLED, c["env"], reduce="sum")
            log(NUM_ENV_STEPS_SAMPLED_LIFETIME, c["env"], reduce="lifetime_sum", with_throughput=True)
        if "episodes" in c:
            log(NUM_EPISODES, c["episodes"], reduce="sum")
            log(NUM_EPISODES_LIFETIME, c["episodes"], reduce="lifetime_sum")
        for key, n in c.items():
            if isinstance(key, tuple) and key[0] == "decisions":
                log((DECISIONS, key[1]), n, reduce="sum")
            elif isinstance(key, tuple):
                now, life = ((NUM_AGENT_STEPS_SAMPLED, NUM_AGENT_STEPS_SAMPLED_LIFETIME) if key[0] == "agent" else
                             (NUM_MODULE_STEPS_SAMPLED, NUM_MODULE_STEPS_SAMPLED_LIFETIME))
                log((now, key[1]), n, reduce="sum")
                log((life, key[1]), n, reduce="lifetime_sum")

    def sample(self, *args: Any, **kwargs: Any):
        try:
            return super().sample(*args, **kwargs)
        finally:
            self._log_counts()

    def make_env(self) -> None:
        if self.env is not None:
            self.env.close()
        c = dict(self.config.env_config or {})
        self.env = RLlibTables(self.config.num_envs_per_env_runner, reward=c.get("reward", "score"),
                               reward_scale=c.get("reward_scale", 1.0), score_scale=c.get("score_scale", 8.0))
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True


__all__ = ["OBS_SPACE", "RLlibTables", "TablesEnvRunner", "split_targets"]
