"""``DouZeroAgent``: DouZero's three networks playing at any seat; a ``bidder`` bids and doubles.

Agent spec (``agents.load``, ``evaluate.py``, ``ddz-play``)::

    douzero:DIR                 # DIR holds landlord.ckpt, landlord_up.ckpt, landlord_down.ckpt
    douzero:DIR?bidder=random   # who bids, doubles and redoubles for it (any agent spec; default rule)

``DIR`` is a folder of DouZero's three state dicts (its released baselines ``douzero_ADP``,
``douzero_WP``, ``sl`` are such folders), or the run folder DouZero's trainer writes
(``landlord_weights_<frames>.ckpt`` and the like: the latest frame count saved for all
three positions is used). DouZero has no bidding and no doubling; in a hand that has them
(the rulebook), the ``bidder`` agent makes those decisions and the networks play the cards.

The networks see DouZero's features computed from the seat's own observation planes
(:mod:`agents.douzero.encoding`, R21) and score only this project's legal moves (a subset of
DouZero's: the stricter kicker rulings of R11-R13). Greedy and deterministic, as DouZero's
own evaluation: the first best move in id order. The ``douzero`` package is not needed.
"""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import torch

from ddz_env.files import input_file
from ddz_env.rules import Phase

from ..base import BatchAgent, Decisions, as_batch_agent
from ..loader import SchemeSpec, parse_spec
from .encoding import MOVE54, POSITIONS, encode_states
from .model import DouZeroNet

SCHEME = "douzero:"
FILES = {p: f"{p}.ckpt" for p in ("landlord", "landlord_up", "landlord_down")}
_KIND = {"landlord": "landlord", "landlord_up": "farmer", "landlord_down": "farmer"}
_RUN_FILE = re.compile(r"^(landlord|landlord_up|landlord_down)_weights_(\d+)\.ckpt$")
OPTIONS = ("bidder",)


def check_spec(spec: str | SchemeSpec) -> tuple[str, dict[str, str]]:
    """``"douzero:DIR?bidder=random"`` -> ``("DIR", {"bidder": "random"})``, from the loader's reading
    (`agents.loader.parse_spec`: ``bidder``'s value, an agent spec, runs to the end); ``ValueError`` naming
    what is wrong."""
    if isinstance(spec, str) and spec.startswith(SCHEME):
        spec = parse_spec(spec)
    if not isinstance(spec, SchemeSpec) or spec.scheme != SCHEME[:-1]:
        raise ValueError(f"a DouZero agent spec is 'douzero:DIR' or 'douzero:DIR?bidder=SPEC', got {spec!r}")
    if not spec.target:
        raise ValueError(f"{spec.text!r}: no folder after 'douzero:' (write douzero:DIR, DIR holding "
                         f"{', '.join(FILES.values())})")
    options: dict[str, str] = {}
    for key, value in spec.options:
        if key not in OPTIONS or not value:
            raise ValueError(f"{spec.text!r}: the one option is '?bidder=SPEC' (an agent spec such as random, rule, "
                             f"pretrained or a checkpoint path), got {spec.query!r}")
        options[key] = value
    return spec.target, options


def find_files(folder: str | os.PathLike) -> dict[str, str]:
    """The three state-dict files of a DouZero folder, by position; ``FileNotFoundError`` naming what is missing.

    A folder with any of ``landlord.ckpt``, ``landlord_up.ckpt``, ``landlord_down.ckpt`` must hold all three;
    else a DouZero run folder's ``<position>_weights_<frames>.ckpt`` of the largest frame count saved for all
    three positions.
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        what = "a file, not a folder" if os.path.exists(folder) else "no such folder"
        raise FileNotFoundError(f"DouZero folder {folder!r}: {what} (it holds {', '.join(FILES.values())})")
    names = set(os.listdir(folder))
    present = [f for f in FILES.values() if f in names]
    if present:
        missing = [f for f in FILES.values() if f not in names]
        if missing:
            raise FileNotFoundError(f"DouZero folder {folder!r} lacks {', '.join(missing)} (it has "
                                    f"{', '.join(present)}; a DouZero agent needs all three networks)")
        return {p: os.path.join(folder, f) for p, f in FILES.items()}
    saved: dict[int, set[str]] = {}
    for n in names:
        m = _RUN_FILE.match(n)
        if m:
            saved.setdefault(int(m.group(2)), set()).add(m.group(1))
    complete = [f for f, ps in saved.items() if len(ps) == 3]
    if not complete:
        raise FileNotFoundError(f"DouZero folder {folder!r} holds neither {', '.join(FILES.values())} nor a DouZero "
                                f"run's <position>_weights_<frames>.ckpt for all three positions")
    frames = max(complete)
    return {p: os.path.join(folder, f"{p}_weights_{frames}.ckpt") for p in FILES}


def load_net(path: str, position: str) -> DouZeroNet:
    """One position's network from a DouZero state-dict file; ``ValueError`` naming the file and the problem."""
    kind = _KIND[position]
    net = DouZeroNet(kind)
    path = input_file(path, "DouZero network")  # a regular file of bounded size: no FIFO, device or 10 GB file
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (UnpicklingError, RuntimeError, EOFError...)
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"{path!r} is corrupt or not a DouZero checkpoint: torch.load failed "
                         f"({type(e).__name__}: {first})") from None
    if isinstance(sd, dict) and isinstance(sd.get("agent"), str):
        raise ValueError(f"{path!r} is a ddz-env checkpoint (agent {sd['agent']!r}), not a DouZero state dict: "
                         f"load it as a checkpoint path, without 'douzero:'")
    want = net.state_dict()
    if not isinstance(sd, dict) or not all(isinstance(v, torch.Tensor) for v in sd.values()):
        got = type(sd).__name__ if not isinstance(sd, dict) else f"a dict with keys {sorted(map(str, sd))[:6]}"
        raise ValueError(f"{path!r} is not a DouZero state dict (a dict of tensors {', '.join(list(want)[:3])}, ...): "
                         f"got {got}")
    missing = [k for k in want if k not in sd]
    if missing:
        raise ValueError(f"{path!r} is not a DouZero {kind} network: it lacks {', '.join(missing[:4])}"
                         f"{' ...' if len(missing) > 4 else ''} (keys present: {sorted(sd)[:6]})")
    for k, v in want.items():
        if tuple(sd[k].shape) != tuple(v.shape):
            other = "farmer" if kind == "landlord" else "landlord"
            hint = f" (is it a {other} network?)" if k == "dense1.weight" else ""
            raise ValueError(f"{path!r}: {k} has shape {tuple(sd[k].shape)}, a DouZero {kind} network's is "
                             f"{tuple(v.shape)}{hint}")
        if not sd[k].is_floating_point() or not bool(torch.isfinite(sd[k]).all()):
            raise ValueError(f"{path!r}: {k} holds non-finite or non-float values")
    # extra keys are ignored, as DouZero's own loader does
    net.load_state_dict({k: sd[k].float() for k in want})
    return net.eval()


class DouZeroAgent(BatchAgent):
    """Greedy over DouZero's landlord, landlord_down and landlord_up networks; ``bidder`` for the other phases."""

    def __init__(self, nets: dict[str, DouZeroNet], bidder: Any = "rule", name: str = "douzero",
                 threads: int | None = 1):
        """``nets``: position -> :class:`DouZeroNet` (``landlord``, ``landlord_up``, ``landlord_down``);
        ``bidder``: an agent spec or object for bid / double / redouble; ``threads``: torch CPU threads
        (``None`` leaves torch's setting; one decision is a small batch, one thread is fastest)."""
        missing = [p for p in FILES if p not in nets]
        if missing:
            raise ValueError(f"DouZeroAgent needs the networks of {', '.join(FILES)}; missing {', '.join(missing)}")
        for p, net in nets.items():
            if not isinstance(net, DouZeroNet) or net.kind != _KIND.get(p):
                raise ValueError(f"network {p!r} must be a DouZeroNet({_KIND.get(p)!r}), got {net!r}")
        if isinstance(bidder, str):
            if bidder.startswith(SCHEME):
                raise ValueError(f"bidder {bidder!r}: a DouZero agent does not bid; name an agent that does "
                                 f"(rule, random, pretrained, a checkpoint)")
            from ..loader import load

            self.bidder_spec = bidder
            bidder = load(bidder)
        else:
            self.bidder_spec = getattr(bidder, "name", type(bidder).__name__)
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.nets = [nets[p].eval() for p in POSITIONS]  # by role: landlord, landlord_down, landlord_up
        self.bidder = as_batch_agent(bidder)
        self.name = name

    @classmethod
    def from_dir(cls, folder: str | os.PathLike, bidder: Any = "rule", **kwargs: Any) -> "DouZeroAgent":
        """The agent of a DouZero folder (:func:`find_files`); errors name the file and what is wrong."""
        files = find_files(folder)
        nets = {p: load_net(path, p) for p, path in files.items()}
        kwargs.setdefault("name", f"douzero:{os.fspath(folder)}")
        agent = cls(nets, bidder=bidder, **kwargs)
        agent.files = files
        return agent

    @classmethod
    def from_spec(cls, spec: str | SchemeSpec, **kwargs: Any) -> "DouZeroAgent":
        """``douzero:DIR`` or ``douzero:DIR?bidder=SPEC`` (``kwargs`` go to the constructor)."""
        folder, options = check_spec(spec)
        spec = spec.text if isinstance(spec, SchemeSpec) else spec
        if "bidder" in options and "bidder" in kwargs:
            raise ValueError(f"{spec!r} names a bidder and the call passes bidder={kwargs['bidder']!r}: give one")
        kwargs = {**options, **kwargs}
        kwargs.setdefault("name", spec)
        return cls.from_dir(folder, **kwargs)

    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        self.bidder.begin_hands(streams, seeds)

    def values(self, decisions: Decisions) -> list[np.ndarray]:
        """Each play decision's Q-values of its legal ids (float32), in the order of ``decisions.legal(i)``;
        an empty array for a decision of another phase."""
        return self._score(decisions, forced_too=True)[1]

    def _score(self, decisions: Decisions, forced_too: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        n = len(decisions)
        starts, ids = decisions.legal_starts, decisions.legal_ids
        counts = np.diff(starts)
        if (counts == 0).any():
            raise ValueError("DouZeroAgent: a decision without a legal action (is this seat on turn?)")
        actions = ids[starts[:-1]].copy()  # the first legal id: the choice when it is the only one
        values: list[np.ndarray] = [np.zeros(0, np.float32)] * n
        play = decisions.phase == int(Phase.PLAY)
        bad = play & ~np.isin(decisions.role, (0, 1, 2))
        if bad.any():
            raise ValueError("DouZeroAgent: a play decision without a role in its status plane")
        if (ids[np.repeat(play, counts)] >= MOVE54.shape[0]).any():
            raise ValueError("DouZeroAgent: a play decision whose legal ids are not moves")
        with torch.inference_mode():
            for role, net in enumerate(self.nets):
                idx = np.flatnonzero(play & (decisions.role == role) & ((counts > 1) | forced_too))
                if idx.size == 0:
                    continue
                state, z = encode_states(decisions.observation[idx], decisions.role[idx])
                c = counts[idx]
                rows = np.repeat(np.arange(idx.size), c)
                pos = np.arange(int(c.sum())) - np.repeat(c.cumsum() - c, c) + np.repeat(starts[idx], c)
                cand = ids[pos]
                q = net.score(torch.from_numpy(z).float(), torch.from_numpy(state).float(),
                              torch.from_numpy(rows), torch.from_numpy(MOVE54[cand]).float()).numpy()
                if not np.isfinite(q).all():
                    raise ValueError(f"DouZeroAgent: non-finite Q-values from the {POSITIONS[role]} network")
                first = np.concatenate([[0], c.cumsum()[:-1]])
                best = np.maximum.reduceat(q, first)
                # the first candidate (in id order) reaching its decision's maximum
                hit = np.flatnonzero(q >= best[rows])
                keep = np.concatenate([[True], rows[hit][1:] != rows[hit][:-1]])
                actions[idx] = cand[hit[keep]]
                if forced_too:  # (values asked for: per decision)
                    for k, i in enumerate(idx.tolist()):
                        values[i] = q[first[k]:first[k] + c[k]]
        other = np.flatnonzero(~play)
        if other.size:
            a = np.asarray(self.bidder.act_batch(decisions.take(other)))
            if a.shape != (other.size,):
                raise ValueError(f"DouZeroAgent: its bidder {self.bidder_spec!r} returned {a.shape} actions for "
                                 f"{other.size} decisions")
            actions[other] = a
        return actions, values

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        """One legal id per decision: the networks' best move in play, the bidder's choice in the other phases."""
        return self._score(decisions, forced_too=False)[0]

    def __repr__(self) -> str:
        return f"DouZeroAgent({self.name!r}, bidder={self.bidder_spec!r})"


def from_spec(spec: str | SchemeSpec, **kwargs: Any) -> DouZeroAgent:
    """The loader's entry point for ``douzero:`` specs."""
    return DouZeroAgent.from_spec(spec, **kwargs)


__all__ = ["DouZeroAgent", "DouZeroNet", "check_spec", "find_files", "load_net", "from_spec", "FILES"]
