"""``DMCAgent``: a trained DMC checkpoint playing at any seat, in every phase (greedy, deterministic).

It uses only what its seat is given (R21): the observation planes, the legal actions, and
the phase and role the planes carry (to pick the network: the role's in play, the bidding
network before). One forward pass decides a whole batch of decisions.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch


from ..base import BatchAgent, Decisions
from ..loader import check_tensor_bytes, pretrained_path
from .model import BIDDING_NET, OBS_CELLS, DMCModel, net_of
from .checkpoint import check_checkpoint, load_checkpoint



def check_shapes(args: tuple, weights: Any) -> None:
    """``ValueError`` unless ``weights`` (a state dict) has exactly the tensors of ``DMCModel(*args)``, shape for
    shape, and that network fits the bound on an agent file (:func:`~agents.loader.check_tensor_bytes`). The
    model is laid out on the meta device (no memory), so stated sizes that are absurd cost nothing: a 17 MB file
    asking for ``state_layers: [300000]`` took 43 s and 9.4 GB before it was refused; stride-0 weights of those
    shapes fit in a few KB."""
    if not isinstance(weights, dict):
        raise ValueError(f"'model' must be a state dict, got {type(weights).__name__}")
    with torch.device("meta"):
        net = DMCModel(*args).state_dict()
    want = {k: tuple(v.shape) for k, v in net.items()}
    got = {k: tuple(v.shape) for k, v in weights.items() if torch.is_tensor(v)}
    if got != want:
        diff = sorted(set(got) ^ set(want)) or sorted(k for k in want if got[k] != want[k])
        k = diff[0]
        raise ValueError(f"the weights do not fit the stated model_kwargs: {k} is {got.get(k, 'missing')}, the "
                         f"stated layers make it {want.get(k, 'absent')}")
    check_tensor_bytes(net, "the network of the stated model_kwargs")
    check_tensor_bytes(weights, "the weights")


class DMCAgent(BatchAgent):
    """Greedy Q-agent over the four DMC networks (landlord, farmer down, farmer up, bidding)."""

    def __init__(self, model: DMCModel, device: str = "cpu", name: str = "dmc", threads: int | None = 1):
        """``threads``: torch CPU threads for this process (one decision is a tiny batch: a single
        thread is ~8x faster than two when the other core is busy); ``None`` leaves torch's setting."""
        if threads is not None and str(device).startswith("cpu"):
            torch.set_num_threads(int(threads))
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.name = name

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike | dict, device: str = "cpu") -> "DMCAgent":
        """Load a checkpoint file (or run folder, or an already loaded checkpoint dict).

        FileNotFoundError for a missing path; ValueError for a corrupt or non-DMC file.
        """
        if isinstance(path, dict):  # (agents.load reads the file, then hands its dict here)
            ck = check_checkpoint(path, "checkpoint dict")
            name = "dmc"
        else:
            ck = load_checkpoint(path)
            name = f"dmc:{os.path.basename(os.fspath(path))}"
        try:
            kw = ck["model_kwargs"]
            args = (list(kw["state_layers"]), list(kw["head_layers"]), int(kw.get("history_lstm", 0)),
                    bool(kw.get("hand_after", False)), str(kw.get("value_head", "q")),
                    bool(kw.get("predict_hands", False)))  # (its hand head is kept, never used to act)
            check_shapes(args, ck["model"])  # the file's sizes against its weights before any memory is taken
            bad = [k for k, v in ck["model"].items() if torch.is_tensor(v) and v.is_floating_point()
                   and not bool(torch.isfinite(v).all())]  # (after the sizes: isfinite takes a tensor's full size)
            model = DMCModel(*args)
            model.load_state_dict(ck["model"])
        except (KeyError, TypeError, RuntimeError, AttributeError, ValueError) as e:
            raise ValueError(f"DMC checkpoint with unusable weights: {type(e).__name__}: {e}") from None
        if bad:
            raise ValueError(f"DMC checkpoint with non-finite weights (NaN or inf) in {bad[0]}: the run diverged")
        agent = cls(model, device=device, name=name)
        agent.frames = int(ck.get("frames", 0))
        return agent

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        """Greedy action of every decision: one state encoding each, all candidates scored per network."""
        starts = decisions.legal_starts
        if (np.diff(starts) == 0).any():
            raise ValueError("DMCAgent: a decision without a legal action (is this seat on turn?)")
        n = len(decisions)
        planes = np.ascontiguousarray(decisions.observation, dtype=np.int8).reshape(n, OBS_CELLS)
        nets = net_of(decisions.phase, decisions.role)
        if ((nets < 0) | (nets > BIDDING_NET)).any():
            raise ValueError("DMCAgent: a play decision without a role in its status plane")
        return self.model.choose(planes, nets, starts, decisions.legal_ids).astype(np.int64)

    def values(self, decisions: Decisions) -> list[np.ndarray]:
        """Each decision's Q-values of its legal ids (float32, in the order of ``decisions.legal(i)``;
        bids and doubles too): what the greedy choice maximises (the search agent ranks candidates by it)."""
        n = len(decisions)
        starts = decisions.legal_starts
        planes = np.ascontiguousarray(decisions.observation, dtype=np.int8).reshape(n, OBS_CELLS)
        nets = net_of(decisions.phase, decisions.role)
        q = self.model.q_legal(planes, nets, starts, decisions.legal_ids)
        return np.split(q, starts[1:-1])

    def __repr__(self) -> str:
        return f"DMCAgent({self.name})"




def pretrained(checkpoint: dict) -> DMCAgent:
    """The factory of ``agents.load("pretrained")``: the DMC checkpoint shipped with the package."""
    agent = DMCAgent.from_checkpoint(pretrained_path())
    agent.name = "pretrained"
    return agent


__all__ = ["DMCAgent", "pretrained"]
