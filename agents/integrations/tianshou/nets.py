"""Tianshou 2.0: the move-scoring policy as Tianshou's actor and critic, and PPO at one seat.

=====================  ====================================================================================
:class:`MaskedSeatEnv` the single-seat Gymnasium env (:class:`~agents.integrations.seat_env.DouDizhuSeatEnv`)
                       with Tianshou's masked observation: ``{"obs": planes, "mask": bool (24648,)}`` (as
                       ``tianshou.env.PettingZooEnv`` hands a seat's legal actions over)
:class:`Actor`         Tianshou's actor signature, ``(obs, state, info) -> (logits, state)``: the
                       :class:`~agents.integrations.move_policy.MoveScoringPolicy`'s logits of each row's
                       legal moves only (padded to the longest legal set of the batch), and its ``dist``:
                       a categorical over them in action ids (``CandidateCategorical``)
:class:`Critic`        ``obs -> value (B, 1)``: the same trunk's value head
:func:`make_ppo`       ``DiscreteActorPolicy`` + ``PPO`` over one :class:`MoveScoringPolicy` (actor and critic
                       share its parameters; ``ActorCritic`` counts each once for the optimizer)
:func:`train`          PPO at one seat (drawn per hand) against ``opponents`` to a time budget, checkpointed
                       and resumable (``train.py --config tianshou``; the benchmark's contract)
=====================  ====================================================================================

The training loop is Tianshou's on-policy step written out (as ``OnPolicyTrainer`` does it, without its
epoch bookkeeping, so that it stops at a wall time and checkpoints on a clock): ``Collector.collect`` of
``decisions_per_batch`` decisions into a ``VectorReplayBuffer``, ``PPO.update`` over it (GAE, ``epochs``
passes of minibatches), the buffer emptied. A trained policy is saved in the one export format
(``policy.pt``, ``"movescore"``) that ``agents.load``, ``evaluate.py``, the league, ``ddz-play`` and the
web page seat; Tianshou's own state (weights and optimizer) goes to ``tianshou_state.pt``, tensors only.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_SHAPE

from ...dmc.model import BIDDING_NET
from ..move_policy import (LEGAL_WIDTH, CandidateCategorical, MoveScoringPolicy, entropy_weights, explore_bids, net_of_planes,
                          padded_pairs, save_policy)


# ---------------------------------------------------------------------------------------------- env
class MaskedSeatEnv(gymnasium.ObservationWrapper):
    """A seat env's observation as Tianshou's masked dict: ``{"obs": planes int8, "mask": bool (24648,)}``."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict({"obs": env.observation_space,
                                              "mask": spaces.Box(0, 1, (n,), dtype=bool)})

    def observation(self, obs: np.ndarray) -> dict:
        return {"obs": obs, "mask": self.env.unwrapped.action_masks()}


def seat_env(opponents: Any = "random", reward_scale: float = 0.05, **kwargs: Any) -> MaskedSeatEnv:
    """One learning seat (a random one per hand) against ``opponents``, in Tianshou's masked form."""
    from ..seat_env import DouDizhuSeatEnv

    return MaskedSeatEnv(DouDizhuSeatEnv(opponents=opponents, reward_scale=reward_scale, **kwargs))


class SeatTables:
    """``agents.integrations.seat_vector.VectorSeatEnv`` as Tianshou's vector env (what ``Collector``
    steps): ``num_envs`` tables in one batched env, the opponents of all of them acting in one ``act_batch`` per
    step, instead of a ``DummyVectorEnv`` of seat envs stepped one by one (measured with the rule and random
    opponents at 64 tables: 5,900 decisions per CPU second for env and opponents alone, against about 1,500).
    Observations are ``Batch(obs=planes int8 (29, 4, 15), legal=int16 (LEGAL_WIDTH,))``: the legal ids, then
    ``-1`` (2 KB a step in the buffer, not a 24,648 mask). A finished table holds its next hand at once;
    ``reset(env_id)`` of such a table returns that hand's first observation."""

    is_async = False
    waiting_id: list[int] = []

    def __init__(self, num_envs: int, opponents: Any = "random", *, seed: int = 0, reward_scale: float = 0.05):
        from ..seat_vector import VectorSeatEnv

        self.tables = VectorSeatEnv(num_envs, opponents, seed=seed, reward_scale=reward_scale)
        self.env_num = self.tables.num_envs
        self.action_space = [spaces.Discrete(NUM_ACTIONS)] * self.env_num
        self.observation_space = [spaces.Dict({"obs": spaces.Box(0, 1, OBS_SHAPE, dtype=np.int8),
                                               "legal": spaces.Box(-1, NUM_ACTIONS - 1, (LEGAL_WIDTH,), np.int16)})
                                  ] * self.env_num
        self.is_closed = False

    def __len__(self) -> int:
        return self.env_num

    def _obs(self, ids: np.ndarray) -> Any:
        from tianshou.data import Batch

        return Batch(obs=self.tables.observe()[ids], legal=self.tables.padded_legal(LEGAL_WIDTH)[ids])

    def _ids(self, env_id: Any) -> np.ndarray:
        return np.arange(self.env_num) if env_id is None else np.asarray(env_id, np.int64).reshape(-1)

    def seed(self, seed: Any = None) -> list:
        """Reseeds every table (an int; a list: its first entry)."""
        s = seed[0] if isinstance(seed, (list, tuple)) else seed
        if s is not None:
            self.tables.reset(seed=int(s))
        return [s] * self.env_num

    def reset(self, env_id: Any = None, **kwargs: Any) -> tuple[Any, np.ndarray]:
        ids = self._ids(env_id)
        self.tables.reset(tables=ids)
        return self._obs(ids), np.array([{"env_id": int(i)} for i in ids], dtype=object)

    def step(self, action: Any, id: Any = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ids = self._ids(id)
        if ids.size != self.env_num or (ids != np.arange(self.env_num)).any():
            raise ValueError(f"SeatTables steps all {self.env_num} tables together (Collector(n_step=...)), "
                             f"got the ids {ids.tolist()}")
        _, reward, terminal, info = self.tables.step(np.asarray(action).astype(np.int64))
        infos = np.array([{"env_id": i} for i in range(self.env_num)], dtype=object)
        for i in np.flatnonzero(terminal).tolist():
            infos[i]["score"] = int(info["scores"][i, info["seat"][i]])
        return self._obs(ids), reward, terminal, np.zeros(self.env_num, bool), infos

    def render(self, **kwargs: Any) -> list:
        return []

    def close(self) -> None:
        self.is_closed = True


# ---------------------------------------------------------------------------------------------- networks
def _tensor(x: Any, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x, device=device)


def _inputs(obs: Any, device: torch.device) -> tuple[torch.Tensor, Any]:
    """Tianshou's observation batch as the policy's inputs: the planes, and the legal moves as ``(rows, ids)``
    pairs, read from ``obs.legal`` (padded ids, ``SeatTables``) or ``obs.mask`` (a dense mask,
    ``MaskedSeatEnv``)."""
    planes = _tensor(obs.obs, device).reshape((-1,) + OBS_SHAPE)
    if "legal" in obs.keys():
        legal = _tensor(obs.legal, device).reshape(planes.shape[0], -1).long()
        return planes, padded_pairs(legal)
    return planes, _tensor(obs.mask, device).reshape(planes.shape[0], -1).bool()


class Actor(nn.Module):
    """``(obs, state, info) -> (logits (B, K), state)``: the move-scoring policy's logits of each row's legal
    moves only, padded to the longest legal set of the batch (K, not 24,648). Their action ids are kept in
    ``last`` for :meth:`dist`, which Tianshou calls on these logits right after (``dist_fn``); the
    distribution's samples and log-probabilities are in action ids, as Tianshou's buffer holds them."""

    def __init__(self, policy: MoveScoringPolicy, bid_epsilon: float = 0.0, entropy_weights: Sequence[float] = (1.0, 1.0)):
        super().__init__()
        self.policy, self.bid_epsilon = policy, float(bid_epsilon)
        self.play_weight, self.bid_weight = (float(w) for w in entropy_weights)
        self.last: tuple | None = None

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        planes, legal = _inputs(obs, self.policy.action_counts.device)
        logits, ids, valid, _ = self.policy.candidates(planes, legal)
        own = weight = None
        if self.bid_epsilon > 0 or self.play_weight != self.bid_weight:
            bidding = net_of_planes(planes.reshape(planes.shape[0], -1).float()) == BIDDING_NET
            if self.bid_epsilon > 0:  # the behaviour policy explores bids: its log-probabilities are the logits
                own, logits = logits, explore_bids(logits, valid, bidding, self.bid_epsilon)
            if self.play_weight != self.bid_weight:  # (PPO's one ent_coef times each row's weight: bids apart)
                weight = torch.where(bidding, self.bid_weight, self.play_weight).to(logits.dtype)
        self.last = (ids, valid, own, weight)  # (the entropy bonus is the policy's own, not the mixture's)
        return logits, state

    def dist(self, logits: torch.Tensor) -> CandidateCategorical:
        """Tianshou's ``dist_fn``: the categorical over the candidates :meth:`forward` just scored."""
        if self.last is None or self.last[0].shape != logits.shape:
            raise RuntimeError("Actor.dist: call the actor on this batch first (its candidates are not known)")
        ids, valid, own, weight = self.last
        return CandidateCategorical(logits, ids, valid, entropy_weight=weight, policy_logp=own)


class Critic(nn.Module):
    """``obs -> value (B, 1)``: the move-scoring policy's value head (the state encoder it shares with
    :class:`Actor`)."""

    def __init__(self, policy: MoveScoringPolicy):
        super().__init__()
        self.policy = policy

    def forward(self, obs: Any, **kwargs: Any) -> torch.Tensor:
        planes, _ = _inputs(obs, self.policy.action_counts.device)
        return self.policy.value(planes).reshape(-1, 1)


def make_ppo(policy: MoveScoringPolicy, action_space: gymnasium.Space, *, learning_rate: float = 1e-3,
             eps_clip: float = 0.2, ent_coef: float = 0.01, bid_entropy_coeff: float | None = None,
             bid_epsilon: float = 0.0, vf_coef: float = 0.5, gae_lambda: float = 0.95,
             gamma: float = 1.0, max_grad_norm: float = 1.0, max_batchsize: int = 256):
    """Tianshou's ``PPO`` over ``policy``: ``DiscreteActorPolicy(Actor)`` sampling from the categorical over each
    row's legal moves (:class:`~agents.integrations.move_policy.CandidateCategorical`, ``Actor.dist``; greedy when
    evaluated: ``deterministic_eval``), ``Critic`` for the advantages (GAE); ``bid_epsilon``: the actor draws bids,
    doubles and redoubles uniformly with this probability (its categorical is that mixture);
    ``bid_entropy_coeff``: their entropy bonus apart from play's ``ent_coef`` (None: the same)."""
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory

    coeff, play, bid = entropy_weights(ent_coef, bid_entropy_coeff)
    actor = Actor(policy, bid_epsilon, (play, bid))
    actor_policy = DiscreteActorPolicy(actor=actor, action_space=action_space, deterministic_eval=True,
                                       dist_fn=actor.dist)
    return PPO(policy=actor_policy, critic=Critic(policy), optim=AdamOptimizerFactory(lr=learning_rate),
               eps_clip=eps_clip, ent_coef=coeff, vf_coef=vf_coef, gae_lambda=gae_lambda, gamma=gamma,
               max_grad_norm=max_grad_norm, max_batchsize=max_batchsize, advantage_normalization=True)


# ---------------------------------------------------------------------------------------------- training
def export_policy(policy: MoveScoringPolicy, path: str | os.PathLike, **info: Any) -> None:
    """``policy`` in the one export format (``agents.load(path)`` seats it), marked as Tianshou's."""
    save_policy(policy, path, library="tianshou", **info)


#: train()'s options and their defaults (``train.py --config tianshou --set options.KEY=VALUE``)
DEFAULTS: dict[str, Any] = {
    "opponents": ["rule"], "num_envs": 128, "decisions_per_batch": 4096, "epochs": 2, "minibatch": 1024,
    "learning_rate": 1e-3, "clip_epsilon": 0.2, "entropy_coeff": 0.01, "bid_entropy_coeff": None, "bid_epsilon": 0.1, "gae_lambda": 0.95, "reward_scale": 0.05,
    "state_layers": (256,), "head_layers": (128,), "init": None, "checkpoint_seconds": 120.0,
    "progress_seconds": 30.0, "threads": 1,
}
STATE_FILE = "tianshou_state.pt"


def train(seconds: float, run_dir: str | os.PathLike, *, decisions: int | None = None, cadence: Any = None, seed: int = 0,
          resume: bool = False, progress: bool = True,
          **options: Any) -> dict:
    """Tianshou PPO with the move-scoring policy at one seat for ``seconds`` of wall time or ``decisions``
    learned from in all (the first reached; across resumes): ``num_envs`` tables of one batched env (``SeatTables``; table ``i`` plays against
    ``opponents[i % n]``, each an ``agents.load`` spec), ``decisions_per_batch`` per collect, ``epochs`` passes of
    ``minibatch``-sized minibatches per update. Rewards are rulebook scores times ``reward_scale``; gamma 1.

    ``run_dir`` gets ``tianshou_state.pt`` (the algorithm's state dict: weights and optimizer, tensors),
    ``state.json`` (steps, wall and CPU seconds so far) and ``policy.pt`` (the export format) every
    ``checkpoint_seconds`` and at the end; ``resume=True`` continues from them. ``init="pretrained"``
    starts from the shipped DMC agent. Returns ``{"steps", "cpu_seconds", "wall_seconds", "policy"}``
    (steps: the learning seat's decisions learned from)."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

    from ddz_env.files import replacing

    from ...runs.session import Session

    o = check_options(options)
    torch.set_num_threads(int(o["threads"]))
    ses = Session("tianshou", run_dir, seconds, decisions=decisions, cadence=cadence, resume=resume, progress=progress, state_files=(STATE_FILE,),
                  counters={"collects": 0}, checkpoint_seconds=o["checkpoint_seconds"],
                  progress_seconds=o["progress_seconds"])
    opps: Sequence[Any] = [o["opponents"]] if isinstance(o["opponents"], str) else list(o["opponents"])
    if o["init"] is not None:
        policy = MoveScoringPolicy.from_dmc(o["init"])
    else:
        policy = MoveScoringPolicy(state_layers=o["state_layers"], head_layers=o["head_layers"], hand_after=True)
    n_envs = int(o["num_envs"])
    # (a resumed run is seeded with seed + its collects so far: it deals new hands, not the first run's again)
    collects = int(ses.done["collects"])
    torch.manual_seed(seed + collects)
    envs = SeatTables(n_envs, opps, seed=seed * 1000 + collects, reward_scale=o["reward_scale"])
    algo = make_ppo(policy, envs.action_space[0], learning_rate=o["learning_rate"], eps_clip=o["clip_epsilon"],
                    ent_coef=o["entropy_coeff"], bid_entropy_coeff=o["bid_entropy_coeff"], bid_epsilon=o["bid_epsilon"],
                    gae_lambda=o["gae_lambda"])
    if ses.resuming:
        algo.load_state_dict(torch.load(ses.path(STATE_FILE), map_location="cpu", weights_only=True))
    buffer = VectorReplayBuffer(int(o["decisions_per_batch"]) + n_envs * 64, n_envs)  # (a hand: at most ~30 of a
    collector = Collector[CollectStats](algo, envs, buffer)                          # seat's decisions)
    collector.reset()
    info = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}, "seed": seed}
    returns: list[float] = []

    def save() -> None:
        with replacing(ses.path(STATE_FILE)) as tmp:
            torch.save(algo.state_dict(), tmp)
        export_policy(policy, ses.policy_path, steps=int(ses.done["steps"]), **info)

    def line() -> str:
        recent = returns[-200:]
        return f"mean score {np.mean(recent):+.2f} of the last {len(recent)} hands" if recent else "no hand yet"

    with ses.keeping(save):
        while ses.running():
            with torch_train_mode(algo, False), torch.no_grad():
                stats = collector.collect(n_step=int(o["decisions_per_batch"]))
            returns += [float(r) / o["reward_scale"] for r in np.asarray(stats.returns).reshape(-1)]
            with policy_within_training_step(algo.policy), torch_train_mode(algo):
                algo.update(buffer=buffer, batch_size=int(o["minibatch"]), repeat=int(o["epochs"]))
            buffer.reset(keep_statistics=True)
            ses.done["steps"] += int(stats.n_collected_steps)
            ses.done["collects"] += 1
            ses.tick(save, line)
    envs.close()
    return ses.finish(save)


def check_options(options: dict) -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``)."""
    from ..options import check_options as check

    return check("tianshou", options, DEFAULTS)


__all__ = ["check_options", "MaskedSeatEnv", "seat_env", "Actor", "Critic", "make_ppo", "export_policy", "train", "DEFAULTS"]
