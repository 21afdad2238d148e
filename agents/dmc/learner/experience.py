"""Acting on a batch of tables and turning finished hands into (state, action, target) samples.

:class:`Collector` steps one :class:`~ddz_env.vector.VectorDouDizhu`: one forward pass picks
the action of every table (epsilon-greedy). Every decision waits in its table's pending
list (planes, action, net, seat) until the hand ends; then each of the hand's decisions
gets the final R19 score of the seat that made it, transformed (:func:`transform_target`);
a void hand (all passed) gives 0 to everyone. Finished samples accumulate in a staging
area that :meth:`Collector.pop_batch` hands out in fixed-size batches.

Fixed opponents (config ``opponents``, e.g. ``[rule]``, or past checkpoints): in a share
``opponent_share`` of the hands, one of them (drawn per hand) takes the B seats of one of
the six duplicate seatings (AAB ... ABB, drawn per hand; A the learner), so the learner
meets, at every seat and in every phase, the opponents it is measured against. Their
decisions are training samples too (``learn_from_opponents``): Monte-Carlo returns of
their choices, for the network of the position they held.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ddz_env.actions import BID_PASS, DOUBLE, REDOUBLE
from ddz_env.info import GAME
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu
from ddz_env.observation import OBS_CELLS

from ...base import Decisions, as_batch_agent, take_sets
from ...evaluation.protocols import DUPLICATE_SEATINGS
from ...integrations.targets import hand_target
from ..config import TrainConfig
from ..model import BIDDING_NET, DMCModel, hidden_hands, net_ids, sample_cells

MAX_DECISIONS = GAME.max_decisions  # 168: the longest hand (ddz_env.info)
#: the six duplicate seatings as "seat held by the opponent" masks (B = opponent)
SEATINGS = np.array([[c == "B" for c in p] for p in DUPLICATE_SEATINGS])


def transform_target(scores: np.ndarray, target: str, score_scale: float, net: np.ndarray | None = None) -> np.ndarray:
    """The learning target of raw R19 scores (:func:`agents.integrations.targets.hand_target`, the one place
    every learner reads): ``net``, the samples' network ids, says which are bids (needed by "sign_play")."""
    s = np.asarray(scores, dtype=np.float32)
    bidding = None if net is None else np.asarray(net) == BIDDING_NET
    return np.asarray(hand_target(s, bidding, target, score_scale), np.float32).reshape(s.shape)


class Pending:
    """Per-table lists of the current hand's decisions, flushed with targets when the hand ends."""

    def __init__(self, num_envs: int, max_len: int = MAX_DECISIONS, cells: int = OBS_CELLS):
        """``cells``: a sample row's width (``sample_cells``: the planes, then any hidden-hand targets)."""
        self.num_envs = num_envs
        self.obs = np.zeros((num_envs, max_len, cells), np.int8)
        self.action = np.zeros((num_envs, max_len), np.int32)
        self.net = np.zeros((num_envs, max_len), np.int8)
        self.seat = np.zeros((num_envs, max_len), np.int8)
        self.keep = np.ones((num_envs, max_len), bool)
        self.length = np.zeros(num_envs, np.int64)
        self._b = np.arange(num_envs)

    def add(self, obs: np.ndarray, action: np.ndarray, net: np.ndarray, seat: np.ndarray,
            keep: np.ndarray | None = None, hidden: np.ndarray | None = None) -> None:
        """One decision in every table; ``keep`` False: not a training sample (it still counts);
        ``hidden`` (B, HIDDEN_CELLS): the hidden-hand targets, stored after the planes."""
        k = self.length
        if k.max() >= self.obs.shape[1]:
            raise RuntimeError("a hand has more decisions than MAX_DECISIONS")
        self.obs[self._b, k, :OBS_CELLS] = obs.reshape(self.num_envs, OBS_CELLS)
        if hidden is not None:
            self.obs[self._b, k, OBS_CELLS:] = hidden
        self.action[self._b, k] = action
        self.net[self._b, k] = net
        self.seat[self._b, k] = seat
        self.keep[self._b, k] = True if keep is None else keep
        self.length += 1

    def flush(self, slots: np.ndarray, final_scores: np.ndarray, void: np.ndarray, target: str,
              score_scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Samples of the ended hands in ``slots``: each decision's target is its seat's final score
        (transformed); void hands score 0. ``final_scores`` (B, 3), ``void`` (B,). Clears the slots.

        Only the kept (table, step) cells are gathered (``self.obs[slots]`` would first copy every
        table's whole 168-step history: 8% of an actor's time at 512 tables)."""
        slots = np.asarray(slots, dtype=np.int64)
        n = self.length[slots]
        hand = np.repeat(slots, n)
        pos = np.arange(hand.size) - np.repeat(np.cumsum(n) - n, n)
        keep = self.keep[hand, pos]
        hand, pos = hand[keep], pos[keep]
        obs = self.obs[hand, pos]
        action = self.action[hand, pos]
        net = self.net[hand, pos]
        seat = self.seat[hand, pos].astype(np.int64)
        scores = final_scores[hand, seat] * ~void[hand]
        self.length[slots] = 0
        return obs, action, net, transform_target(scores, target, score_scale, net)

    def state_dict(self) -> dict[str, torch.Tensor]:
        valid = np.arange(self.obs.shape[1])[None, :] < self.length[:, None]
        return {"length": torch.from_numpy(self.length.copy()), "obs": torch.from_numpy(self.obs[valid]),
                "action": torch.from_numpy(self.action[valid]), "net": torch.from_numpy(self.net[valid]),
                "seat": torch.from_numpy(self.seat[valid]), "keep": torch.from_numpy(self.keep[valid])}

    def load_state_dict(self, d: dict[str, torch.Tensor]) -> None:
        self.length[:] = d["length"].numpy()
        valid = np.arange(self.obs.shape[1])[None, :] < self.length[:, None]
        self.obs[valid] = d["obs"].numpy()
        self.action[valid] = d["action"].numpy()
        self.net[valid] = d["net"].numpy()
        self.seat[valid] = d["seat"].numpy()
        if "keep" in d:
            self.keep[valid] = d["keep"].numpy()


def env_state_dict(env: VectorDouDizhu) -> dict[str, Any]:
    """:meth:`VectorDouDizhu.state_dict` with its arrays as tensors (``torch.load(weights_only=True)``)."""
    st = env.state_dict()
    st["arrays"] = {k: torch.from_numpy(v) for k, v in st["arrays"].items()}
    return st


def load_env_state_dict(env: VectorDouDizhu, d: dict[str, Any]) -> None:
    env.load_state_dict({**d, "arrays": {k: v.numpy() for k, v in d["arrays"].items()}})


class SampleRing:
    """Finished samples waiting to be batched, oldest first: preallocated arrays used as a ring.

    ==========  ===================  ==========================================
    array       shape, dtype         one row per sample
    ==========  ===================  ==========================================
    ``obs``     (capacity, 1740) i8  the planes the decision was made on (then, with hidden-hand
                                     prediction, the 30 target cells: 1770 columns)
    ``action``  (capacity,) i32      the action id taken
    ``net``     (capacity,) i8       the network of the decision
    ``target``  (capacity,) f32      its Monte-Carlo target
    ==========  ===================  ==========================================

    :meth:`push` appends, :meth:`pop` takes a batch off the front (into the caller's arrays,
    e.g. a shared-memory buffer, with ``out``); the capacity doubles when a push would
    overflow. It replaces a list of per-step pieces concatenated at every batch (with 512
    tables that re-copied every staged sample once per batch).
    """

    def __init__(self, capacity: int, cells: int = OBS_CELLS):
        self.arrays = (np.zeros((capacity, cells), np.int8), np.zeros(capacity, np.int32),
                       np.zeros(capacity, np.int8), np.zeros(capacity, np.float32))
        self.head = 0  # row of the oldest sample
        self.size = 0

    @property
    def capacity(self) -> int:
        return self.arrays[1].shape[0]

    def _spans(self, start: int, n: int) -> list[tuple[int, int, int]]:
        """(ring row, row in the piece, length) of the <= 2 contiguous spans of ``n`` rows from ``start``."""
        cap = self.capacity
        first = min(n, cap - start)
        spans = [(start, 0, first)]
        if n > first:
            spans.append((0, first, n - first))
        return spans

    def push(self, *parts: np.ndarray) -> None:
        n = parts[0].shape[0]
        if self.size + n > self.capacity:
            order = self.peek()
            cap = max(2 * self.capacity, self.size + n)
            self.arrays = tuple(np.zeros((cap,) + a.shape[1:], a.dtype) for a in self.arrays)
            for dst, src in zip(self.arrays, order):
                dst[:self.size] = src
            self.head = 0
        for at, off, k in self._spans((self.head + self.size) % self.capacity, n):
            for dst, src in zip(self.arrays, parts):
                dst[at:at + k] = src[off:off + k]
        self.size += n

    def pop(self, size: int, out: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, ...] | None:
        """The ``size`` oldest samples (new arrays, or written into ``out``), or None if fewer are staged."""
        if self.size < size:
            return None
        if out is None:
            out = tuple(np.empty((size,) + a.shape[1:], a.dtype) for a in self.arrays)
        for at, off, k in self._spans(self.head, size):
            for dst, src in zip(out, self.arrays):
                dst[off:off + k] = src[at:at + k]
        self.head = (self.head + size) % self.capacity
        self.size -= size
        return out

    def peek(self) -> tuple[np.ndarray, ...]:
        """Copies of every staged sample, oldest first (for checkpoints)."""
        out = tuple(np.empty((self.size,) + a.shape[1:], a.dtype) for a in self.arrays)
        for at, off, k in self._spans(self.head, self.size):
            for dst, src in zip(out, self.arrays):
                dst[off:off + k] = src[at:at + k]
        return out

    def clear(self) -> None:
        self.head = self.size = 0


class Stats:
    """What the hands finished while a batch was collected say, as one float array (:meth:`as_array`;
    the actors send it beside each batch):

    ===========  ==================================================================
    index        value
    ===========  ==================================================================
    0, 1, 2      sum of the raw scores per position (landlord, farmer down, up) of
                 the finished self-play hands that were not void
    3            those hands
    4            void self-play hands (all passed)
    5, 6         the learner's net score (its seats summed) in the hands against
                 fixed opponents or past selves, and those hands
    7 .. 10      the learner's bids: pass, 1, 2, 3 (every bidding turn it played)
    11, 12       its doubling turns, and the doubles among them
    13, 14       its redoubling turns, and the redoubles among them
    ===========  ==================================================================
    """

    SIZE = 15
    BIDS, DOUBLES, REDOUBLES = 7, 11, 13

    def __init__(self):
        self.sums = np.zeros(3)
        self.hands = 0
        self.voids = 0
        self.vs_sum = 0.0
        self.vs_hands = 0
        self.choices = np.zeros(self.SIZE - self.BIDS)

    def add(self, final_scores: np.ndarray, landlord: np.ndarray, void: np.ndarray, ended: np.ndarray,
            learner_seats: np.ndarray | None = None) -> None:
        """``learner_seats`` (B, 3) bool: the learner's seats of each ended hand (None: all, self-play)."""
        if learner_seats is not None:
            mixed = ~learner_seats[ended].all(axis=1)
            vs = ended[mixed]
            self.vs_sum += float((final_scores[vs] * learner_seats[vs]).sum())
            self.vs_hands += int(vs.size)
            ended = ended[~mixed]
        ok = ended[~void[ended]]
        self.voids += int(void[ended].sum())
        if ok.size:
            lord = landlord[ok]
            for p in range(3):
                self.sums[p] += final_scores[ok, (lord + p) % 3].sum()
            self.hands += ok.size

    def add_choices(self, phase: np.ndarray, actions: np.ndarray) -> None:
        """The learner's bid / double / redouble choices of one step (its decisions only)."""
        c = self.choices
        bid = actions[phase == int(Phase.BID)] - BID_PASS
        c[:4] += np.bincount(bid, minlength=4)[:4]
        dbl = actions[phase == int(Phase.DOUBLE)]
        c[4] += dbl.size
        c[5] += int((dbl == DOUBLE).sum())
        rdb = actions[phase == int(Phase.REDOUBLE)]
        c[6] += rdb.size
        c[7] += int((rdb == REDOUBLE).sum())

    def as_array(self) -> np.ndarray:
        return np.array([*self.sums, self.hands, self.voids, self.vs_sum, self.vs_hands, *self.choices], np.float64)

    def clear(self) -> None:
        self.sums[:] = 0
        self.hands = self.voids = 0
        self.vs_sum, self.vs_hands = 0.0, 0
        self.choices[:] = 0


class Collector:
    """An actor's tables: act with ``model`` (epsilon-greedy), the fixed opponents and the pool of
    past selves, collect finished samples.

    Who holds the seats of each table's hand, ``owner[b, s]``: -1 the learner; ``k`` in
    ``0 .. len(opponents) - 1`` fixed opponent ``k``; ``len(opponents) + j`` slot ``j`` of the pool.
    The pool (config ``pool_every``) is this actor's own: every ``pool_every`` of its decisions it
    copies the weights it acts with into a slot (the oldest one once ``pool_size`` are held), so no
    weights travel; a hand whose slot is refilled plays on with the newer copy.
    """

    def __init__(self, cfg: TrainConfig, seed: int, device: str = "cpu"):
        self.cfg = cfg
        self.device = device
        self.env = VectorDouDizhu(cfg.num_envs, seed=seed, rules=cfg.rules_value())
        self.rng = np.random.default_rng([seed, 7])
        self.cells = sample_cells(cfg.hand_prediction > 0)
        self.pending = Pending(cfg.num_envs, cells=self.cells)
        self.stats = Stats()
        self.obs = self.env.observe()
        self.ring = SampleRing(max(4 * cfg.batch_size, 8 * cfg.num_envs), self.cells)
        self.decisions = 0
        self.opponents = []
        if cfg.opponents and cfg.opponent_share > 0:
            from ...loader import load

            self.opponents = [as_batch_agent(load(spec)) for spec in cfg.opponents]
        self.pool: list[DMCModel] = []  # past selves, in slot order
        self.pool_next = 0  # the slot the next copy fills
        self.pool_due = cfg.pool_every  # decisions count of the next copy
        self.owner = np.full((cfg.num_envs, 3), -1, np.int64)
        self._new_hands(np.arange(cfg.num_envs))

    @property
    def _mixing(self) -> bool:
        return self.cfg.opponent_share > 0 and bool(self.opponents or self.cfg.pool_every)

    def _new_hands(self, slots: np.ndarray) -> None:
        """Draw who holds the seats of the hands just dealt in ``slots``; opponents start their streams."""
        if not self._mixing or slots.size == 0:
            return
        self.owner[slots] = -1
        mixed = slots[self.rng.random(slots.size) < self.cfg.opponent_share]
        if mixed.size == 0:
            return
        nfix = len(self.opponents)
        which = self.rng.integers(max(nfix, 1), size=mixed.size)
        if self.pool:
            past = self.rng.random(mixed.size) < (self.cfg.pool_share if nfix else 1.0)
            which = np.where(past, nfix + self.rng.integers(len(self.pool), size=mixed.size), which)
        elif not nfix:  # only a pool, still empty: self-play
            return
        seating = SEATINGS[self.rng.integers(len(SEATINGS), size=mixed.size)]
        self.owner[mixed] = np.where(seating, which[:, None], -1)
        seeds = self.rng.integers(2**63, size=(mixed.size, 3), dtype=np.uint64)
        streams = mixed[:, None] * 3 + np.arange(3)
        for k, agent in enumerate(self.opponents):
            held = self.owner[mixed] == k
            if held.any():
                agent.begin_hands(streams[held], seeds[held])

    def _keep_self(self, model: DMCModel) -> None:
        """Copy the acting weights into the pool's next slot."""
        state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        if len(self.pool) < self.cfg.pool_size:
            past = DMCModel(**self.cfg.model_kwargs())
            past.eval()
            self.pool.append(past)
        self.pool[self.pool_next].load_state_dict(state)
        self.pool_next = (self.pool_next + 1) % self.cfg.pool_size

    def step(self, model) -> None:
        """One decision in every table."""
        env = self.env
        cfg = self.cfg
        if cfg.pool_every and self.decisions >= self.pool_due:
            self._keep_self(model)
            self.pool_due += cfg.pool_every
        legal = env.legal_sets()
        _, ids, starts = legal
        seat = env.current_player.copy()
        nets = net_ids(env.phase, seat, env.landlord)
        obs = self.obs.reshape(env.num_envs, OBS_CELLS)
        who = self.owner[np.arange(env.num_envs), seat]
        learner = who < 0
        if learner.all():
            with cfg.autocast(actor=True):
                actions = model.choose(obs, nets, starts, ids)
        else:
            actions = np.zeros(env.num_envs, np.int64)
            players = [(-1, model)] + [(len(self.opponents) + j, m) for j, m in enumerate(self.pool)]
            for k, net_model in players:
                idx = np.flatnonzero(who == k) if k >= 0 else np.flatnonzero(learner)
                if idx.size:
                    st, lid = take_sets(starts, ids, idx)
                    with cfg.autocast(actor=True):
                        actions[idx] = net_model.choose(obs[idx], nets[idx], st, lid)
            for k, agent in enumerate(self.opponents):
                idx = np.flatnonzero(who == k)
                if idx.size:
                    actions[idx] = agent.act_batch(Decisions.of_env(env, idx, observation=self.obs, legal_sets=legal))
        if cfg.epsilon > 0 or cfg.bid_epsilon > 0:
            eps = np.where(nets == BIDDING_NET, cfg.bid_epsilon, cfg.epsilon)
            explore = (self.rng.random(env.num_envs) < eps) & learner
            if explore.any():
                actions = np.where(explore, env.random_actions(self.rng), actions)
        keep = None if learner.all() or cfg.learn_from_opponents else learner
        hidden = hidden_hands(env.hands, seat) if self.cells > OBS_CELLS else None  # targets only (R21)
        self.pending.add(obs, actions, nets, seat, keep, hidden)
        early = learner & (nets == BIDDING_NET)
        if early.any():
            self.stats.add_choices(env.phase[early], actions[early])
        out, _, done, info = env.step(actions)
        self.decisions += env.num_envs
        self.obs = out["observation"]
        ended = np.flatnonzero(done)
        if ended.size:
            self.ring.push(*self.pending.flush(ended, info["final_scores"], info["void"], cfg.target,
                                               cfg.score_scale))
            self.stats.add(info["final_scores"], info["landlord"], info["void"], ended,
                           self.owner < 0 if self._mixing else None)
            self._new_hands(ended)

    def pop_batch(self, size: int, out: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, ...] | None:
        """``size`` finished samples (obs int8, action int32, net int8, target float32), oldest first;
        written into ``out`` (arrays of those shapes and dtypes) when given."""
        return self.ring.pop(size, out)

    def state_dict(self) -> dict[str, Any]:
        parts = self.ring.peek() if self.ring.size else []
        d = {"env": env_state_dict(self.env), "pending": self.pending.state_dict(),
             "rng": self.rng.bit_generator.state, "obs": torch.from_numpy(np.array(self.obs)),
             "owner": torch.from_numpy(self.owner.copy()),
             "stage": [torch.from_numpy(p) for p in parts], "decisions": int(self.decisions)}
        if self.cfg.pool_every:
            d["pool"] = {"models": [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in self.pool],
                         "next": self.pool_next, "due": self.pool_due}
        return d

    def load_state_dict(self, d: dict[str, Any]) -> None:
        load_env_state_dict(self.env, d["env"])
        self.pending.load_state_dict(d["pending"])
        self.rng.bit_generator.state = d["rng"]
        self.obs = d["obs"].numpy().copy()
        if "owner" in d:
            self.owner[...] = d["owner"].numpy()
        self.ring.clear()
        parts = [t.numpy() for t in d["stage"]]
        if parts and parts[0].shape[0]:
            self.ring.push(*parts)
        self.decisions = int(d["decisions"])
        pool = d.get("pool")
        if pool is not None:
            self.pool = []
            for state in pool["models"]:
                past = DMCModel(**self.cfg.model_kwargs())
                past.load_state_dict(state)
                past.eval()
                self.pool.append(past)
            self.pool_next, self.pool_due = int(pool["next"]), int(pool["due"])


__all__ = ["Collector", "Pending", "hidden_hands", "SampleRing", "Stats", "SEATINGS", "transform_target", "env_state_dict", "load_env_state_dict",
           "MAX_DECISIONS"]
