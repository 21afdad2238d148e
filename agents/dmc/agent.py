"""``DMCAgent``: a trained DMC checkpoint playing at any seat, in every phase (greedy, deterministic).

It uses only public information (R21): its own observation planes, the legal actions and
the landlord seat (public once the bidding ends) to pick the network of its role.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from ddz_env.game import Phase

from .model import OBS_CELLS, DMCModel, net_ids
from .trainer import load_checkpoint


class DMCAgent:
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
        if isinstance(path, dict):
            ck = path
            if ck.get("agent") != "dmc" or "model" not in ck or "model_kwargs" not in ck:
                raise ValueError("not a DMC checkpoint dict")
            name = "dmc"
        else:
            ck = load_checkpoint(path)
            name = f"dmc:{os.path.basename(os.fspath(path))}"
        kw = ck["model_kwargs"]
        try:
            model = DMCModel(list(kw["state_layers"]), list(kw["head_layers"]), int(kw.get("history_lstm", 0)),
                             bool(kw.get("hand_after", False)))
            model.load_state_dict(ck["model"])
        except (KeyError, TypeError, RuntimeError) as e:
            raise ValueError(f"DMC checkpoint with unusable weights: {e}") from None
        agent = cls(model, device=device, name=name)
        agent.frames = int(ck.get("frames", 0))
        return agent

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the agent is greedy and deterministic."""

    def act(self, observation: dict[str, np.ndarray], env: Any) -> int:
        planes = np.asarray(observation["observation"], dtype=np.int8).reshape(1, OBS_CELLS)
        raw = getattr(env, "unwrapped", env)
        if raw is not None and hasattr(raw, "legal_actions"):
            legal = np.asarray(raw.legal_actions(), dtype=np.int64)
        else:
            legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size == 0:
            raise ValueError("no legal action: the agent is not on turn")
        game = raw.game
        phase = int(game.phase)
        seat = int(game.current_player)
        landlord = int(game.landlord) if phase == int(Phase.PLAY) else 0
        nets = net_ids(np.array([phase]), np.array([seat]), np.array([landlord]))
        starts = np.array([0, legal.size], dtype=np.int64)
        return int(self.model.choose(planes, nets, starts, legal)[0])

    def __repr__(self) -> str:
        return f"DMCAgent({self.name})"


__all__ = ["DMCAgent"]
