"""Q(s, a) networks: the state is encoded once per decision, then scored with every candidate action.

Four networks (``NET_NAMES``): the play-phase landlord, the farmer after it ("down"), the
farmer before it ("up"), and one for the bid / double / redouble decisions (whose value is
the hand's expected score for the seat). Net of a decision: :func:`net_ids`.

A :class:`QNet` is

* a state encoder: an MLP over the env's 29 x 4 x 15 observation planes (history
  included), optionally with an LSTM over the 15 history planes (DouZero's design), run
  once per decision;
* an action encoding: the action's 60-cell card plane (``MOVE_PLANES``), a one-hot of its
  move type, and a one-hot of the 8 bid / double / redouble choices (a fixed table);
* with ``hand_after`` (config ``action_features: hand_after``), two more features per
  candidate that depend on the state: the thermometer plane of the hand *after* the move
  (60 cells) and a one-hot of the cards left after it (0..20). A late-fusion head cannot
  rebuild "what this move leaves me" from a 256-number state embedding; these give it
  directly (see agents/dmc/README.md for the measured effect);
* a Q head: an MLP over concat(state embedding, action features). Its first layer is
  split, ``W [s; a] = W_s s + W_a a``, so ``W_s s`` is computed once per decision and only
  ``W_a a`` (and the layers after it) per candidate.

The head's output (config ``value_head``):

==============  ========================================================================
``q``           one number: Q(s, a), regressed on the Monte-Carlo target
``decomposed``  five numbers (``HEAD_PARTS``): logits of the hand's outcome for the seat
                (won, lost, void) and the expected score if won and if lost, as in
                AlphaDou; Q = P(won) V_won + P(lost) V_lost (a void hand scores 0). The
                outcome is a clean win/loss signal and the values keep the stakes.
==============  ========================================================================
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ddz_env.actions import NUM_ACTIONS
from ddz_env.game import Phase
from ddz_env.moves import MOVE_COUNTS, MOVE_TYPE, NUM_MOVE_TYPES, NUM_MOVES
from ddz_env.cards import MAX_HAND, NUM_RANKS
from ddz_env.observation import CH_HISTORY, HISTORY, LAYOUT_BY_NAME, MOVE_PLANES, OBS_CELLS, PLANE_CELLS
from ddz_env.rules import Role, role_of

from .config import NET_NAMES

#: hidden-hand prediction (config ``hand_prediction``): a training sample's row is its planes, then the
#: true cards of the next and the previous seat (2 x 15 counts) as training targets; never an input
HIDDEN_CELLS = 2 * NUM_RANKS
HAND_CLASSES = 5  # a rank's count in a hand: 0 .. 4


def sample_cells(predict_hands: bool) -> int:
    """Width of a training sample's row: the planes (OBS_CELLS), plus HIDDEN_CELLS targets with hidden-hand prediction."""
    return OBS_CELLS + (HIDDEN_CELLS if predict_hands else 0)
BIDDING_NET = 3
NUM_NETS = len(NET_NAMES)
LSTM_GROUP = 3  # history plays per LSTM step
#: the outputs of a ``decomposed`` head, in order
HEAD_PARTS = ("logit_won", "logit_lost", "logit_void", "value_won", "value_lost")
VALUE_HEADS = ("q", "decomposed")


def combine(parts: torch.Tensor) -> torch.Tensor:
    """Q of ``decomposed`` head outputs (..., 5): P(won) V_won + P(lost) V_lost."""
    p = torch.softmax(parts[..., :3].float(), dim=-1)
    return p[..., 0] * parts[..., 3].float() + p[..., 1] * parts[..., 4].float()


def _action_table() -> np.ndarray:
    """(NUM_ACTIONS, ACTION_DIM) float32 features of every action id."""
    feats = np.zeros((NUM_ACTIONS, PLANE_CELLS + NUM_MOVE_TYPES + 8), np.float32)
    feats[:NUM_MOVES, :PLANE_CELLS] = MOVE_PLANES[:NUM_MOVES]
    feats[np.arange(NUM_MOVES), PLANE_CELLS + MOVE_TYPE.astype(np.int64)] = 1.0
    feats[NUM_MOVES + np.arange(8), PLANE_CELLS + NUM_MOVE_TYPES + np.arange(8)] = 1.0
    return feats


ACTION_FEATURES = _action_table()
ACTION_DIM = ACTION_FEATURES.shape[1]
#: cards of each rank every action id takes from the hand (zeros for pass, bids, doubles)
ACTION_COUNTS = np.zeros((NUM_ACTIONS, 15), np.int8)
ACTION_COUNTS[:NUM_MOVES] = MOVE_COUNTS[:NUM_MOVES]
HAND_AFTER_DIM = PLANE_CELLS + MAX_HAND + 1  # thermometer plane of the hand after the move + one-hot of its size


# the play networks are indexed by the seat's Role (net_ids): their names follow Role's order
if tuple(NET_NAMES[r] for r in Role) != ("landlord", "farmer_down", "farmer_up"):  # pragma: no cover
    raise ImportError(f"NET_NAMES {NET_NAMES} do not follow ddz_env.rules.Role {list(Role)}")


def net_of(phase: np.ndarray, role: np.ndarray) -> np.ndarray:
    """THE network choice: 3 (bidding) before the play phase, else the seat's role (0 landlord, 1 the
    farmer after it, 2 the farmer before it; NET_NAMES is in that order). Agents read phase and role from
    the status plane (``Decisions``); the learner from the game (:func:`net_ids`); the move-scoring policy
    from the planes in torch (``integrations.move_policy.net_of_planes``, the same choice)."""
    phase = np.asarray(phase)
    return np.where(phase == int(Phase.PLAY), role, BIDDING_NET).astype(np.int64)


def net_ids(phase: np.ndarray, seat: np.ndarray, landlord: np.ndarray) -> np.ndarray:
    """:func:`net_of` from the game's arrays: the seat's role from its seat and the landlord (``rules.role_of``)."""
    phase = np.asarray(phase)
    return net_of(phase, role_of(np.asarray(seat), np.where(phase == int(Phase.PLAY), landlord, -1)))


_THERMO_ROWS = torch.arange(4).view(1, 4, 1)


def hand_after_features(hand: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """(M, HAND_AFTER_DIM) float: the hand ``hand`` (M, 15) minus the move's ``counts`` (M, 15), as a
    thermometer plane (the observation's layout, cell = 15 * row + rank) and a one-hot of its size."""
    after = hand - counts
    plane = (after.unsqueeze(1) > _THERMO_ROWS.to(after.device)).reshape(after.shape[0], PLANE_CELLS)
    size = torch.nn.functional.one_hot(after.sum(1).clamp(0, MAX_HAND), MAX_HAND + 1)
    return torch.cat([plane.float(), size.float()], dim=1)


def hand_counts(obs: torch.Tensor) -> torch.Tensor:
    """(N, 15) int64 own cards per rank, from (N, 1740) planes (channel 0 is the own hand)."""
    return obs[:, LAYOUT_BY_NAME["hand"].cells].reshape(-1, 4, 15).long().sum(1)


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class QNet(nn.Module):
    def __init__(self, state_layers: list[int], head_layers: list[int], history_lstm: int = 0,
                 hand_after: bool = False, value_head: str = "q", predict_hands: bool = False):
        super().__init__()
        if value_head not in VALUE_HEADS:
            raise ValueError(f"value_head {value_head!r}: one of {', '.join(VALUE_HEADS)}")
        self.decomposed = value_head == "decomposed"
        self.history_lstm = int(history_lstm)
        self.hand_after = bool(hand_after)
        in_dim = OBS_CELLS
        if self.history_lstm:
            self.lstm = nn.LSTM(LSTM_GROUP * PLANE_CELLS, self.history_lstm, batch_first=True)
            in_dim += self.history_lstm
        self.state = _mlp([in_dim] + list(state_layers))  # state_layers may be empty: DouZero's layout
        h0 = head_layers[0]
        self.head_state = nn.Linear(state_layers[-1] if state_layers else in_dim, h0)
        self.head_action = nn.Linear(ACTION_DIM + (HAND_AFTER_DIM if self.hand_after else 0), h0, bias=False)
        self.head = nn.Sequential(nn.ReLU(), _mlp(list(head_layers)),
                                  nn.Linear(head_layers[-1], len(HEAD_PARTS) if self.decomposed else 1))
        # hidden-hand prediction (as DouZero+): logits of each rank's count in the next and the previous
        # seat's hands, from the state encoding; trained on the true hands, never fed back to the Q head
        self.hands_head = (nn.Linear(state_layers[-1] if state_layers else in_dim, HIDDEN_CELLS * HAND_CLASSES)
                           if predict_hands else None)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """(N, 1740) planes (any dtype) -> (N, state width): the state encoding."""
        width = int(np.prod(obs.shape[1:]))
        if width != OBS_CELLS:
            raise ValueError(f"a network reads the {OBS_CELLS} plane cells of a seat's view, got rows of {width} "
                             f"(a training row's hidden-hand targets are no input, R21)")
        x = obs.reshape(obs.shape[0], OBS_CELLS).float()
        if self.history_lstm:
            # the 15 plays, oldest first, 3 a step (as DouZero's 5 x 3-move history)
            hist = x[:, CH_HISTORY * PLANE_CELLS:(CH_HISTORY + HISTORY) * PLANE_CELLS]
            hist = hist.reshape(-1, HISTORY, PLANE_CELLS).flip(1)
            _, (h, _) = self.lstm(hist.reshape(-1, HISTORY // LSTM_GROUP, LSTM_GROUP * PLANE_CELLS))
            x = torch.cat([x, h[-1]], dim=1)
        return self.state(x)

    def encode_state(self, obs: torch.Tensor) -> torch.Tensor:
        """(N, 1740) planes (any dtype) -> (N, h0): the state's part of the head's first layer."""
        return self.head_state(self.features(obs))

    def hand_logits(self, features: torch.Tensor) -> torch.Tensor:
        """(N, HIDDEN_CELLS, HAND_CLASSES) logits of the other two hands' counts from :meth:`features`."""
        return self.hands_head(features).reshape(-1, HIDDEN_CELLS, HAND_CLASSES)

    def outputs(self, state_part: torch.Tensor, rows: torch.Tensor | None, action_feats: torch.Tensor) -> torch.Tensor:
        """The head's raw outputs (M, 1) or (M, 5) of candidates: ``state_part[rows]`` (rows None: one
        candidate per state) with ``action_feats``."""
        s = state_part if rows is None else state_part.index_select(0, rows)
        return self.head(s + self.head_action(action_feats))

    def score(self, state_part: torch.Tensor, rows: torch.Tensor | None, action_feats: torch.Tensor) -> torch.Tensor:
        """Q of candidates (M,) float32."""
        out = self.outputs(state_part, rows, action_feats)
        return combine(out) if self.decomposed else out.squeeze(1).float()

class DMCModel(nn.Module):
    """The four Q-networks, and the action feature tables (buffers, not saved)."""

    def __init__(self, state_layers: list[int], head_layers: list[int], history_lstm: int = 0,
                 hand_after: bool = False, value_head: str = "q", predict_hands: bool = False):
        super().__init__()
        self.kwargs = {"state_layers": list(state_layers), "head_layers": list(head_layers),
                       "history_lstm": int(history_lstm), "hand_after": bool(hand_after)}
        if value_head != "q":  # (checkpoints of the one-output head keep their old kwargs)
            self.kwargs["value_head"] = value_head
        if predict_hands:  # (likewise)
            self.kwargs["predict_hands"] = True
        self.predict_hands = bool(predict_hands)
        self.hand_after = bool(hand_after)
        self.decomposed = value_head == "decomposed"
        self.nets = nn.ModuleList(QNet(state_layers, head_layers, history_lstm, hand_after, value_head, predict_hands)
                                  for _ in NET_NAMES)
        self.register_buffer("action_table", torch.from_numpy(ACTION_FEATURES), persistent=False)
        self.register_buffer("action_counts", torch.from_numpy(ACTION_COUNTS.astype(np.int64)), persistent=False)

    def action_feats(self, actions: torch.Tensor, hand: torch.Tensor | None) -> torch.Tensor:
        """Features of candidate ``actions`` (M,); ``hand`` (M, 15): the hand of each candidate's state."""
        feats = self.action_table.index_select(0, actions)
        if not self.hand_after:
            return feats
        return torch.cat([feats, hand_after_features(hand, self.action_counts.index_select(0, actions))], dim=1)

    def q_pairs(self, net: int, obs: torch.Tensor, actions: torch.Tensor, raw: bool = False,
                with_hands: bool = False):
        """Q of (obs[i], actions[i]) pairs, all of network ``net`` (training); ``raw``: the head's outputs
        (N, 1) or (N, 5) instead; ``with_hands``: ``(that, hand logits (N, 30, 5))``."""
        hand = hand_counts(obs) if self.hand_after else None
        qnet = self.nets[net]
        feats = qnet.features(obs)
        args = (qnet.head_state(feats), None, self.action_feats(actions, hand))
        out = qnet.outputs(*args) if raw else qnet.score(*args)
        return (out, qnet.hand_logits(feats)) if with_hands else out

    @torch.inference_mode()
    def q_legal(self, obs: np.ndarray, nets: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Q of every legal id (M,) float32, in the order of ``ids`` (forced decisions too): ``choose``'s
        scores, for agents that rank moves (the search agent's candidates). ``ValueError`` as ``choose``."""
        device = self.action_table.device
        counts = np.diff(starts)
        q_all = np.zeros(ids.size, np.float32)
        for n in range(NUM_NETS):
            idx = np.flatnonzero((nets == n) & (counts > 0))
            if idx.size == 0:
                continue
            c = counts[idx]
            rows = np.repeat(np.arange(idx.size), c)
            pos = np.arange(int(c.sum())) - np.repeat(c.cumsum() - c, c) + np.repeat(starts[idx], c)
            x = torch.from_numpy(np.ascontiguousarray(obs[idx])).to(device)
            rows_t = torch.from_numpy(rows).to(device)
            net = self.nets[n]
            hand = hand_counts(x).index_select(0, rows_t) if self.hand_after else None
            q = net.score(net.encode_state(x), rows_t, self.action_feats(torch.from_numpy(ids[pos]).to(device), hand))
            q = q.float().reshape(-1)
            if not bool(torch.isfinite(q).all()):
                raise ValueError(f"non-finite Q-values from network {n} ({NET_NAMES[n]}): the weights have "
                                 f"diverged (NaN or inf)")
            q_all[pos] = q.cpu().numpy()
        return q_all

    @torch.inference_mode()
    def choose(self, obs: np.ndarray, nets: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Greedy action of every decision from compact legal sets (``legal_starts``, ``legal_ids``).

        ``obs`` (B, 1740) planes, ``nets`` (B,) net ids. Each state is encoded once; candidates
        are scored in one batch per network; forced decisions (one legal action) are not scored.
        ``ValueError`` if a network gives a non-finite Q-value (diverged weights).
        """
        device = self.action_table.device
        counts = np.diff(starts)
        actions = ids[starts[:-1]].copy()  # the first legal id: the choice when it is the only one
        for n in range(NUM_NETS):
            idx = np.flatnonzero((nets == n) & (counts > 1))
            if idx.size == 0:
                continue
            c = counts[idx]
            total = int(c.sum())
            first = c.cumsum() - c
            rows = np.repeat(np.arange(idx.size), c)
            pos = np.arange(total) - np.repeat(first, c) + np.repeat(starts[idx], c)
            cand = ids[pos]
            x = torch.from_numpy(np.ascontiguousarray(obs[idx])).to(device)
            rows_t = torch.from_numpy(rows).to(device)
            net = self.nets[n]
            hand = hand_counts(x).index_select(0, rows_t) if self.hand_after else None
            feats = self.action_feats(torch.from_numpy(cand).to(device), hand)
            q = net.score(net.encode_state(x), rows_t, feats).float()
            if not bool(torch.isfinite(q).all()):
                raise ValueError(f"non-finite Q-values from network {n} ({NET_NAMES[n]}): the weights have "
                                 f"diverged (NaN or inf)")
            best = torch.full((idx.size,), -torch.inf, device=device).scatter_reduce(0, rows_t, q, "amax")
            is_best = q >= best.index_select(0, rows_t)
            j = torch.arange(total, device=device)
            j = torch.where(is_best, j, torch.full_like(j, total))
            first_best = torch.full((idx.size,), total, device=device, dtype=j.dtype).scatter_reduce(0, rows_t, j, "amin")
            actions[idx] = cand[first_best.cpu().numpy()]
        return actions


def make_model(cfg) -> DMCModel:
    """The model of a :class:`~agents.dmc.config.TrainConfig` (its ``model_kwargs``): the learner's and each actor's."""
    return DMCModel(**cfg.model_kwargs())


def hidden_hands(hands: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(B, HIDDEN_CELLS) int8: the cards of the seat after ``seat`` and of the seat before it, from the
    true hands (B, 3, 15) of the tables: the hidden-hand prediction's targets (the learner reads them
    from the sample rows; no agent is ever given them)."""
    b = np.arange(hands.shape[0])
    seat = np.asarray(seat, np.int64)
    return np.concatenate([hands[b, (seat + 1) % 3], hands[b, (seat + 2) % 3]], axis=1).astype(np.int8)


__all__ = ["hidden_hands", "make_model", "sample_cells", "HIDDEN_CELLS", "HAND_CLASSES", "DMCModel", "QNet", "net_ids", "combine", "HEAD_PARTS", "VALUE_HEADS", "hand_after_features", "ACTION_FEATURES", "ACTION_DIM", "HAND_AFTER_DIM", "OBS_CELLS", "BIDDING_NET", "NUM_NETS"]
