"""A learned agent as an ONNX graph: the DMC agent or a move-scoring policy, to run wherever onnxruntime does.

The graph scores candidate moves; the greedy choice is made outside it, in numpy
(:func:`agents.onnx.agent.greedy`), exactly as the torch agents make it:

==============  ==================  ===================================================================
input           ``planes``          (B, 1740) int8: each decision's observation planes, flattened
input           ``rows``            (M,) int64: the decision (row of ``planes``) of each candidate
input           ``ids``             (M,) int64: each candidate's action id (0 .. 24647)
output          ``scores``          (M,) float32: each candidate's score (DMC: its Q-value; a move-scoring
                                    policy: its logit)
==============  ==================  ===================================================================

B and M are dynamic. The four networks (landlord, the farmer after it, the farmer before it, bidding)
are all inside the graph; each row is routed to its network by its status plane's phase and role, as
:func:`agents.integrations.move_policy.net_of_planes` does in torch (the DMC agent reads the same phase
and role from its ``Decisions``), and each candidate is scored by its row's network only. The file's
metadata (``ddz_env.*`` keys) say what it holds; :mod:`agents.onnx.agent` checks them.

``python -m agents.export AGENT OUT.onnx`` is the program (:mod:`agents.export`); :func:`export_onnx` the call.
"""
from __future__ import annotations

import io
import os
import warnings
from typing import Any

import numpy as np
import torch
from torch import nn

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS

from ..base import Decisions
from ..dmc.agent import DMCAgent
from ..dmc.model import hand_after_features, hand_counts
from ..integrations.move_policy import MoveScoringAgent, net_of_planes
from .agent import FORMAT, INPUTS, ONNX_HINT, OUTPUT, OnnxAgent

#: the ONNX operator set of the exported graphs (onnxruntime 1.16 and later run it)
OPSET = 17


class CandidateScores(nn.Module):
    """``forward(planes (B, 1740), rows (M,), ids (M,)) -> scores (M,)``: the candidate scores of a DMC model
    or a move-scoring policy (``source``: either; both hold four :class:`~agents.dmc.model.QNet` in ``nets``),
    traceable with dynamic B and M. ``temperature``: the scores are divided by it (a policy's logits)."""

    def __init__(self, source: nn.Module, temperature: float = 1.0):
        super().__init__()
        self.nets = source.nets
        self.hand_after = bool(source.hand_after)
        self.temperature = float(temperature)
        self.register_buffer("action_table", source.action_table.detach().cpu().clone(), persistent=False)
        self.register_buffer("action_counts", source.action_counts.detach().cpu().clone(), persistent=False)

    def forward(self, planes: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        x = planes.reshape(-1, OBS_CELLS).float()
        nets = net_of_planes(x)
        cand_net = nets.index_select(0, rows)
        feats = self.action_table.index_select(0, ids)
        if self.hand_after:
            feats = torch.cat([feats, hand_after_features(hand_counts(x).index_select(0, rows),
                                                          self.action_counts.index_select(0, ids))], dim=1)
        scores = torch.zeros_like(ids, dtype=torch.float32)
        local = torch.zeros_like(nets)
        for n, net in enumerate(self.nets):  # (a network with no row gets empty tensors: no branch in the graph)
            idx = (nets == n).nonzero().squeeze(1)
            pos = (cand_net == n).nonzero().squeeze(1)
            local = local.scatter(0, idx, torch.ones_like(idx).cumsum(0) - 1)  # row -> its place among idx
            rows_n = x.index_select(0, idx)
            if net.history_lstm:  # onnxruntime's LSTM aborts the process on an empty batch: one padding row, dropped
                state = net.encode_state(torch.cat([rows_n, x.new_zeros(1, OBS_CELLS)]))[:-1]
            else:
                state = net.encode_state(rows_n)
            s = net.score(state, local.index_select(0, rows.index_select(0, pos)), feats.index_select(0, pos))
            scores = scores.scatter(0, pos, s.float() / self.temperature)
        return scores


def scoring_module(agent: Any) -> CandidateScores:
    """The :class:`CandidateScores` of a seated agent: a :class:`~agents.dmc.agent.DMCAgent` (checkpoint, run
    folder, ``pretrained``) or a :class:`~agents.integrations.move_policy.MoveScoringAgent` (a ``policy.pt``,
    ``sb3:``, ``rllib:``); ``ValueError`` for any other agent."""
    if isinstance(agent, DMCAgent):
        return CandidateScores(agent.model).eval()
    if isinstance(agent, MoveScoringAgent):
        return CandidateScores(agent.policy, agent.policy.temperature).eval()
    raise ValueError(f"{agent!r} has no network to export: ONNX export takes the DMC agent (a checkpoint, a run "
                     f"folder, pretrained) or a move-scoring policy (a policy.pt, sb3:, rllib:)")


def _example(n: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A few decisions of random bidding hands, as the graph's inputs (the trace's example)."""
    from ddz_env.vector import VectorDouDizhu

    env = VectorDouDizhu(n, seed=seed)
    _, ids, starts = env.legal_sets()
    rows = np.repeat(np.arange(n), np.diff(starts))
    return (torch.from_numpy(env.observe().reshape(n, OBS_CELLS).astype(np.int8)), torch.from_numpy(rows),
            torch.from_numpy(np.array(ids, np.int64)))


def export_onnx(spec: Any, path: str | os.PathLike, check: int = 512) -> dict:
    """Write the ONNX graph of agent ``spec`` (anything :func:`agents.load` seats that has networks, or such an
    agent) to ``path``, whole or not at all, then play ``check`` seeded decisions of every phase with it and with
    the torch agent (0: none). Returns ``{"path", "kind", "name", "bytes", "checked", "same", "max_diff"}``
    (``same``: decisions where both chose the same move; ``max_diff``: the largest score difference).
    ``ValueError`` for an agent without networks or a graph whose choices differ from the agent's."""
    try:
        import onnx
        import onnxruntime  # noqa: F401  (the check below plays the graph)
    except ImportError as e:
        raise ImportError(f"ONNX export needs onnx and onnxruntime ({e}): {ONNX_HINT}") from None

    from ddz_env.files import write_binary

    from ..loader import load

    agent = load(spec) if isinstance(spec, (str, os.PathLike)) else spec
    module = scoring_module(agent)
    kind = "dmc" if isinstance(agent, DMCAgent) else "movescore"
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # (the tracer's warnings: a constant width read from the planes' shape, the LSTM's implicit zero state;
        # the graph is checked against the torch agent below, at other batch sizes and move counts)
        warnings.simplefilter("ignore")
        torch.onnx.export(module, _example(), buf, dynamo=False, opset_version=OPSET,
                          input_names=list(INPUTS), output_names=[OUTPUT],
                          dynamic_axes={INPUTS[0]: {0: "B"}, INPUTS[1]: {0: "M"}, INPUTS[2]: {0: "M"},
                                        OUTPUT: {0: "M"}})
    model = onnx.load_from_string(buf.getvalue())
    meta = {"ddz_env.format": str(FORMAT), "ddz_env.kind": kind, "ddz_env.name": str(getattr(agent, "name", kind)),
            "ddz_env.obs_cells": str(OBS_CELLS), "ddz_env.num_actions": str(NUM_ACTIONS),
            "ddz_env.source": os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else repr(agent)}
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=v)
    model.doc_string = (f"ddz-env {kind} agent: scores (M,) of candidate moves ids (M,) of decisions rows (M,) "
                        f"with planes (B, {OBS_CELLS}) int8; the move of a decision is its first highest score")
    data = model.SerializeToString()
    checked = compare(agent, OnnxAgent.from_bytes(data, name=meta["ddz_env.name"]), check) if check else {}
    if checked and checked["same"] != checked["checked"]:
        raise ValueError(f"the ONNX graph chose another move than the torch agent in {checked['checked'] - checked['same']}"
                         f" of {checked['checked']} decisions (largest score difference {checked['max_diff']:.3g}); "
                         f"nothing was written")
    write_binary(path, lambda f: f.write(data))
    return {"path": os.fspath(path), "kind": kind, "name": meta["ddz_env.name"], "bytes": len(data),
            "checked": checked.get("checked", 0), "same": checked.get("same", 0), "max_diff": checked.get("max_diff")}


def decisions(n: int, seed: int = 0, tables: int = 64) -> list[Decisions]:
    """About ``n`` decisions of every phase (bids, doubles, play at each seat): ``tables`` random hands played
    step by step from ``seed``, one batch of ``Decisions`` per step (forced decisions included)."""
    from ddz_env.vector import VectorDouDizhu

    env = VectorDouDizhu(tables, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(1, -(-n // tables))):
        out.append(Decisions.of_env(env))
        env.step(env.random_actions(rng))
    return out


def compare(agent: Any, onnx_agent: OnnxAgent, n: int, seed: int = 0) -> dict:
    """``{"checked", "same", "max_diff"}`` of ``agent`` (torch) and ``onnx_agent`` over about ``n`` decisions
    of :func:`decisions`: how many chose the same move, and the largest difference of a candidate's score."""
    module = scoring_module(agent)
    checked = same = 0
    max_diff = 0.0
    for d in decisions(n, seed):
        want, got = agent.act_batch(d), onnx_agent.act_batch(d)
        checked += len(d)
        same += int((want == got).sum())
        planes, rows, ids = onnx_agent.inputs(d)
        with torch.no_grad():
            ref = module(torch.from_numpy(planes), torch.from_numpy(rows), torch.from_numpy(ids)).numpy()
        max_diff = max(max_diff, float(np.abs(ref - onnx_agent.scores(planes, rows, ids)).max(initial=0.0)))
    return {"checked": checked, "same": same, "max_diff": max_diff}


__all__ = ["CandidateScores", "compare", "decisions", "export_onnx", "scoring_module", "OPSET"]
