"""DouZero's Q-network (an LSTM over the history ``z``, then an MLP over ``[lstm, x]``), written here.

The parameter names and shapes are those of DouZero's ``LandlordLstmModel`` and
``FarmerLstmModel``, so the state dicts in its ``landlord.ckpt``, ``landlord_up.ckpt`` and
``landlord_down.ckpt`` files load as they are: ``lstm`` (162 -> 128, one layer), ``dense1``
(128 + 373 for the landlord, 128 + 484 for a farmer -> 512), ``dense2`` .. ``dense5`` (512 ->
512), ``dense6`` (512 -> 1), ReLU between the dense layers.

:meth:`DouZeroNet.forward` is the network as DouZero runs it (one row per candidate);
:meth:`DouZeroNet.score` computes the same values with the LSTM and the state part of
``dense1`` run once per decision instead of once per candidate.
"""
from __future__ import annotations

import torch
from torch import nn

from .encoding import CARDS, X_DIM, Z_SHAPE

LSTM_SIZE = 128
HIDDEN = 512


class DouZeroNet(nn.Module):
    """One position's network; ``kind`` is ``"landlord"`` (x of 373) or ``"farmer"`` (x of 484)."""

    def __init__(self, kind: str):
        super().__init__()
        if kind not in X_DIM:
            raise ValueError(f"kind must be 'landlord' or 'farmer', got {kind!r}")
        self.kind = kind
        self.x_dim = X_DIM[kind]
        self.lstm = nn.LSTM(Z_SHAPE[1], LSTM_SIZE, batch_first=True)
        self.dense1 = nn.Linear(LSTM_SIZE + self.x_dim, HIDDEN)
        self.dense2 = nn.Linear(HIDDEN, HIDDEN)
        self.dense3 = nn.Linear(HIDDEN, HIDDEN)
        self.dense4 = nn.Linear(HIDDEN, HIDDEN)
        self.dense5 = nn.Linear(HIDDEN, HIDDEN)
        self.dense6 = nn.Linear(HIDDEN, 1)

    def _tail(self, h: torch.Tensor) -> torch.Tensor:
        """ReLU, then dense2 .. dense6 (with ReLU between): (N, 512) pre-activations of dense1 -> (N,) values."""
        for layer in (self.dense2, self.dense3, self.dense4, self.dense5):
            h = layer(torch.relu(h))
        return self.dense6(torch.relu(h)).squeeze(-1)

    def forward(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Values (N, 1) of N candidate rows: ``z`` (N, 5, 162), ``x`` (N, x_dim), as DouZero computes them."""
        out, _ = self.lstm(z)
        return self._tail(self.dense1(torch.cat([out[:, -1], x], dim=-1))).unsqueeze(-1)

    def score(self, z: torch.Tensor, state: torch.Tensor, rows: torch.Tensor, moves54: torch.Tensor) -> torch.Tensor:
        """Values (C,) of C candidates of D decisions: ``z`` (D, 5, 162) and ``state`` (D, x_dim - 54) per decision,
        ``rows`` (C,) the decision of each candidate, ``moves54`` (C, 54) its cards.

        ``dense1([lstm(z), state, move]) = W_h lstm(z) + W_s state + b`` (once per decision) ``+ W_m move``
        (per candidate): the same function as :meth:`forward`, the sums in another order."""
        out, _ = self.lstm(z)
        w = self.dense1.weight
        split = LSTM_SIZE + self.x_dim - CARDS
        per_decision = torch.addmm(self.dense1.bias, torch.cat([out[:, -1], state], dim=-1), w[:, :split].t())
        per_candidate = moves54 @ w[:, split:].t()
        return self._tail(per_decision.index_select(0, rows) + per_candidate)


__all__ = ["DouZeroNet", "LSTM_SIZE", "HIDDEN"]
