"""DouZero's agents here: ``douzero:DIR`` specs, its feature encoding and its network (no ``douzero`` package).

* :mod:`.encoding` (numpy only): DouZero's ``x`` rows and history ``z`` from a seat's observation
  planes, DouZero's card ints <-> this project's card strings;
* :mod:`.model` (torch): DouZero's LSTM + MLP network, state-dict compatible with its checkpoints;
* :mod:`.agent` (torch): :class:`~agents.douzero.agent.DouZeroAgent`, what ``agents.load("douzero:DIR")``
  returns; a ``bidder`` agent bids and doubles for it (``douzero:DIR?bidder=random``; default ``rule``).
"""
from .encoding import DOUZERO_CARD, from_douzero, from_douzero_string, to_douzero

__all__ = ["DOUZERO_CARD", "to_douzero", "from_douzero", "from_douzero_string"]
