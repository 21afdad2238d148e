"""TorchRL 0.14: the move-scoring policy as TorchRL modules, and self-play PPO on the batched env.

=====================  ====================================================================================
:func:`make_actor`     ``ProbabilisticActor`` with ``MaskedCategorical``: ``("observation", "action_mask")`` ->
                       ``"action"`` and ``"action_log_prob"``; the logits are :class:`MoveScoringPolicy`'s,
                       computed from the legal moves only
:func:`make_critic`    ``ValueOperator``: ``"observation"`` -> ``"state_value"``, the same trunk's value head
:class:`SelfPlayEnv`   a TorchRL ``EnvBase`` over ``ddz_env.VectorDouDizhu``: B tables, each step the seat on
                       turn at every table decides (``"seat"`` says which); ``("reward")`` (B, 3) holds the
                       three seats' rulebook scores when a hand ends (times ``reward_scale``)
:func:`seat_returns`   a rollout's decisions with their own seat's return: self-play samples
=====================  ====================================================================================

:func:`make_legal_actor` is :func:`make_actor` over each state's legal moves only (:class:`LegalCategorical`),
what ``train.py --config torchrl`` learns with. :func:`candidates_dist` is TorchRL's ``MaskedCategorical`` over ragged legal sets (a ``dist_fn`` for
``agents.ppo.selfplay.ppo_loss``).

Why an ``EnvBase`` over the batched env and not ``PettingZooWrapper`` on the AEC env: the wrapper steps one
table, observes all three seats (planes and a 24,648-long mask each) and every seat's group must get an
action on every step; measured here, 300 steps of it with a uniform masked policy took 10.4 s (35 ms a
step on a loaded 2-core machine), while :class:`SelfPlayEnv` steps 64 tables in one call and observes only
the seats on turn. Self-play is then plain: every decision of every seat is a sample of the shared policy,
and its return is that seat's score at the end of its hand (gamma 1, as DMC's targets).

``train.py --config torchrl`` trains with these pieces, TorchRL's collector, ``GAE`` and ``ClipPPOLoss``
(:mod:`agents.integrations.torchrl.learner`). A trained policy is saved in the one export format (:func:`export_policy`, ``policy.pt``) that
``agents.load``, ``evaluate.py``, the league, ``ddz-play`` and the web page seat.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.data import Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_SHAPE
from ddz_env.vector import VectorDouDizhu, expand_mask

from ..move_policy import MoveScoringPolicy, gumbel_sample, legal_pairs, save_policy

LOG_PROB = "action_log_prob"


# ---------------------------------------------------------------------------------------------- modules
class _Logits(nn.Module):
    """(planes, mask) -> (logits, mask): MaskedCategorical's inputs (the illegal ids masked by it)."""

    def __init__(self, policy: MoveScoringPolicy):
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lead = obs.shape[:-3]
        logits, _ = self.policy(obs.reshape((-1,) + OBS_SHAPE), mask.reshape(-1, NUM_ACTIONS), fill=0.0)
        return logits.reshape(lead + (NUM_ACTIONS,)), mask


class _Value(nn.Module):
    def __init__(self, policy: MoveScoringPolicy):
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        lead = obs.shape[:-3]
        return self.policy.value(obs.reshape((-1,) + OBS_SHAPE)).reshape(lead + (1,))


class GumbelMaskedCategorical(MaskedCategorical):
    """``MaskedCategorical`` that samples by the Gumbel-max trick (the argmax of the masked logits plus
    Gumbel noise): the same distribution, drawn without ``torch.multinomial``, which over 24,648 categories
    took 10 ms of a 14 ms collector step of 16 tables (cProfile, one thread; Gumbel-max: 2 ms). Log
    probabilities, entropy and the mode are ``MaskedCategorical``'s."""

    def sample(self, sample_shape: torch.Size | tuple = ()) -> torch.Tensor:
        return gumbel_sample(self.logits, sample_shape)  # -inf at the masked ids, which never win the argmax


def make_actor(policy: MoveScoringPolicy) -> ProbabilisticActor:
    """TorchRL's stochastic actor over ``policy``: ``("observation", "action_mask")`` -> ``"action"`` (and
    ``"action_log_prob"``), sampled from ``MaskedCategorical`` (:class:`GumbelMaskedCategorical`, the same
    distribution drawn faster; greedy under ``ExplorationType.MODE``)."""
    module = TensorDictModule(_Logits(policy), in_keys=["observation", "action_mask"], out_keys=["logits", "mask"])
    return ProbabilisticActor(module, in_keys=["logits", "mask"], out_keys=["action"],
                              distribution_class=GumbelMaskedCategorical, return_log_prob=True, log_prob_key=LOG_PROB)


class _LegalLogits(nn.Module):
    """(planes, mask) -> (logits (B, W), ids (B, W)): the scores of each state's legal moves only, padded to the
    largest legal set W of the batch (padding: id -1), and their action ids."""

    def __init__(self, policy: MoveScoringPolicy):
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = obs.shape[0]
        rows, ids = legal_pairs(mask, n)
        scores, _ = self.policy.score_legal(obs.reshape((n,) + OBS_SHAPE), rows, ids)
        counts = torch.bincount(rows, minlength=n)
        starts = torch.zeros(n + 1, dtype=torch.int64)
        torch.cumsum(counts, 0, out=starts[1:])
        slot = torch.arange(rows.numel()) - starts.index_select(0, rows)
        width = int(counts.max()) if n else 1
        logits = scores.new_zeros((n, width)).index_put((rows, slot), scores)
        legal = torch.full((n, width), -1, dtype=torch.int64).index_put((rows, slot), ids)
        return logits, legal


class LegalCategorical(GumbelMaskedCategorical):
    """TorchRL's ``MaskedCategorical`` over each state's legal moves only (``logits`` (B, W) of the legal ids
    ``legal`` (B, W), -1 padding), its values the moves' action ids: the same distribution as
    :class:`GumbelMaskedCategorical` over the 24,648-wide row, without 24,648-wide softmaxes, entropies and
    gradients (measured: those took most of a TorchRL PPO update's time). ``log_prob`` takes action ids."""

    def __init__(self, logits: torch.Tensor, legal: torch.Tensor):
        super().__init__(logits=logits, mask=legal >= 0)
        self.legal = legal

    def _position(self, value: torch.Tensor) -> torch.Tensor:
        return (self.legal == value.unsqueeze(-1)).to(torch.int8).argmax(-1)

    def sample(self, sample_shape: torch.Size | tuple = ()) -> torch.Tensor:
        pos = super().sample(sample_shape)
        legal = self.legal.expand(pos.shape + self.legal.shape[-1:])
        return legal.gather(-1, pos.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return super().log_prob(self._position(value))

    @property
    def mode(self) -> torch.Tensor:
        return self.legal.gather(-1, super().mode.unsqueeze(-1)).squeeze(-1)

    @property
    def deterministic_sample(self) -> torch.Tensor:
        return self.mode


def make_legal_actor(policy: MoveScoringPolicy) -> ProbabilisticActor:
    """:func:`make_actor` with :class:`LegalCategorical`: ``("observation", "action_mask")`` -> ``"action"``
    (an action id) and ``"action_log_prob"``, the logits (``"logits"``, ``"legal"``) only as wide as the
    batch's largest legal set (what ``train.py --config torchrl`` learns with)."""
    module = TensorDictModule(_LegalLogits(policy), in_keys=["observation", "action_mask"], out_keys=["logits", "legal"])
    return ProbabilisticActor(module, in_keys=["logits", "legal"], out_keys=["action"],
                              distribution_class=LegalCategorical, return_log_prob=True, log_prob_key=LOG_PROB)


def make_critic(policy: MoveScoringPolicy) -> ValueOperator:
    """TorchRL's critic over ``policy``'s value head: ``"observation"`` -> ``"state_value"`` (the same trunk)."""
    return ValueOperator(_Value(policy), in_keys=["observation"])


# ---------------------------------------------------------------------------------------------- the env
class SelfPlayEnv(EnvBase):
    """B tables of Dou Dizhu as one TorchRL env (batch ``[B]``); at each step the seat on turn at every table
    acts, all of them the one policy's (self-play). Keys: ``"observation"`` (B, 29, 4, 15) int8 (the acting
    seat's planes), ``"action_mask"`` (B, 24648) bool, ``"seat"`` (B,) the acting seat; after a step
    ``"reward"`` (B, 3): each seat's R19 score times ``reward_scale`` at the tables whose hand ended (zeros
    elsewhere) and ``"done"`` (B, 1). A table whose hand ended is dealt the next hand at once (its next
    observation is the new hand's): a reset changes nothing. One seat against fixed agents is the
    single-seat Gymnasium env in ``GymWrapper`` (``examples/torchrl_ppo.py``)."""

    batch_locked = True

    def __init__(self, num_envs: int = 64, seed: int = 0, reward_scale: float = 0.05):
        super().__init__(batch_size=torch.Size([num_envs]), device="cpu")
        self.vec = VectorDouDizhu(num_envs, seed=seed, reward_scale=reward_scale)
        B = num_envs
        self._mask = np.zeros((B, NUM_ACTIONS), np.int8)
        self.observation_spec = Composite(
            observation=Bounded(0, 1, (B,) + OBS_SHAPE, dtype=torch.int8),
            action_mask=Categorical(2, (B, NUM_ACTIONS), dtype=torch.bool),
            seat=Bounded(0, 2, (B,), dtype=torch.int64), shape=(B,))
        self.action_spec = Categorical(NUM_ACTIONS, (B,), dtype=torch.int64)
        self.reward_spec = Unbounded((B, 3))
        self.done_spec = Composite(done=Categorical(2, (B, 1), dtype=torch.bool),
                                   terminated=Categorical(2, (B, 1), dtype=torch.bool), shape=(B,))

    def _observe(self) -> TensorDict:
        _, ids, starts = self.vec.legal_sets()
        rows = np.repeat(np.arange(self.vec.num_envs), np.diff(starts))
        expand_mask(rows, ids, self.vec.num_envs, out=self._mask)
        mask = torch.from_numpy(self._mask.astype(bool))
        self.action_spec.update_mask(mask)  # (a random action of the spec is a legal one: env.rollout() works)
        return TensorDict({"observation": torch.from_numpy(self.vec.observe()),
                           "action_mask": mask,
                           "seat": torch.from_numpy(self.vec.current_player.copy())}, batch_size=self.batch_size)

    def _reset(self, tensordict: TensorDict | None = None, **kwargs) -> TensorDict:
        td = self._observe()
        td.set("done", torch.zeros(self.batch_size + (1,), dtype=torch.bool))
        td.set("terminated", torch.zeros(self.batch_size + (1,), dtype=torch.bool))
        return td

    def _step(self, tensordict: TensorDict) -> TensorDict:
        _, rewards, done, _ = self.vec.step(tensordict["action"].cpu().numpy().astype(np.int64), observe=False)
        td = self._observe()
        d = torch.from_numpy(done).unsqueeze(-1)
        td.set("reward", torch.from_numpy(rewards))
        td.set("done", d)
        td.set("terminated", d.clone())
        return td

    def _set_seed(self, seed: int | None) -> None:
        self.vec.reset(seed=seed)


def seat_returns(data: TensorDict) -> tuple[TensorDict, np.ndarray]:
    """The decisions of a :class:`SelfPlayEnv` rollout (batch ``[B, T]``) whose hand ended within it, as a
    flat TensorDict, and each one's return: its own seat's reward at the end of its hand (gamma 1). The
    decisions of hands still running at the end of the rollout are left out (their return is unknown)."""
    seat = data["seat"].numpy()
    reward = data["next", "reward"].numpy()  # (B, T, 3)
    done = data["next", "done"].numpy()[..., 0]
    B, T = seat.shape
    ret = np.full((B, T), np.nan, np.float32)
    for b in range(B):
        final = None
        for t in range(T - 1, -1, -1):
            if done[b, t]:
                final = reward[b, t]
            if final is not None:
                ret[b, t] = final[seat[b, t]]
    keep = ~np.isnan(ret)
    flat = data.exclude("next")[torch.from_numpy(keep)]
    return flat, ret[keep]


# ---------------------------------------------------------------------------------------------- export
def export_policy(policy: MoveScoringPolicy, path: str | os.PathLike, **info: Any) -> None:
    """``policy`` in the one export format (``agents.load(path)`` seats it), marked as TorchRL's."""
    save_policy(policy, path, library="torchrl", **info)


def candidates_dist(scores: torch.Tensor, seg: torch.Tensor, n: int, choice_pos: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """TorchRL's own ``MaskedCategorical`` over the legal candidates of ``n`` decisions, padded to the
    largest legal set of the minibatch (not to 24,648): the choices' log-probabilities and the entropies
    (``selfplay.ppo_loss``'s ``dist_fn``)."""
    counts = torch.bincount(seg, minlength=n)
    starts = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(counts, 0, out=starts[1:])
    slot = torch.arange(seg.numel()) - starts.index_select(0, seg)
    width = int(counts.max())
    logits = scores.new_zeros((n, width)).index_put((seg, slot), scores)
    mask = torch.zeros((n, width), dtype=torch.bool).index_put((seg, slot), torch.ones_like(seg, dtype=torch.bool))
    dist = MaskedCategorical(logits=logits, mask=mask)
    return dist.log_prob(choice_pos - starts[:-1]), dist.entropy()


__all__ = ["make_actor", "make_legal_actor", "make_critic", "GumbelMaskedCategorical", "LegalCategorical", "SelfPlayEnv", "seat_returns", "export_policy",
           "candidates_dist"]
