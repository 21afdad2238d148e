"""``onnx:PATH``: an agent exported to ONNX (``python -m agents.export``) playing through onnxruntime, no torch.

The graph (:mod:`agents.onnx.export` describes it) scores each decision's candidate moves;
:func:`greedy` picks each decision's move in numpy, the first of its highest scores, as the torch agents
(``DMCAgent``, ``MoveScoringAgent``) do. Forced decisions (one legal move) are not scored, as there.
onnxruntime and onnx are imported when an agent is made: without them, one ``ImportError`` line says how to
install them. Before onnxruntime builds a session, :mod:`agents.onnx.check` checks the graph with
the onnx package (its inputs and output, operators, every tensor's size at the largest call, external data):
the agent calls the graph with at most ``MAX_ROWS`` decisions and ``MAX_CANDIDATES`` moves at once.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS

from ..loader import SchemeSpec, parse_spec
from ..base import BatchAgent, Decisions
from .check import MAX_CANDIDATES, MAX_ROWS, ONNX_HINT, checked_graph, parse

#: the version of the graph's contract (its inputs, output and metadata)
FORMAT = 1
#: the graph's inputs, in order: planes (B, 1740) int8, rows (M,) int64, ids (M,) int64
INPUTS = ("planes", "rows", "ids")
#: its output: scores (M,) float32
OUTPUT = "scores"
_TYPES = {"planes": "tensor(int8)", "rows": "tensor(int64)", "ids": "tensor(int64)"}


def _onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        raise ImportError(f"onnx: agents run on onnxruntime, which is not installed: {ONNX_HINT}") from None
    return onnxruntime


def greedy(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The position (into ``scores``) of each decision's move: the first of its highest scores. ``scores`` (M,)
    of candidates in decision order, ``starts`` (N + 1,) where each decision's candidates start (none empty)."""
    counts = np.diff(starts)
    best = np.maximum.reduceat(scores, starts[:-1])
    j = np.where(scores >= np.repeat(best, counts), np.arange(scores.size), scores.size)
    return np.minimum.reduceat(j, starts[:-1])


class OnnxAgent(BatchAgent):
    """A greedy agent over an exported graph (deterministic), at any seat, in every phase. Uses only what its
    seat is given (R21): the planes and the legal ids."""

    def __init__(self, session: Any, name: str = "onnx", kind: str = "", data: bytes | None = None, threads: int = 1):
        self.session = session
        self.name = name
        self.kind = kind
        self._data, self._threads = data, threads  # (to rebuild the session in another process)

    def __deepcopy__(self, memo: dict) -> "OnnxAgent":
        """The same agent sharing its session: it keeps no state between decisions (the evaluator copies each
        agent it seats)."""
        return OnnxAgent(self.session, self.name, self.kind, self._data, self._threads)

    def __reduce__(self):  # (evaluation workers: the session is rebuilt from the graph's bytes)
        if self._data is None:
            raise TypeError(f"{self!r} was made from a session, not from a graph's bytes: it cannot be sent to "
                            f"another process")
        return (OnnxAgent.from_bytes, (self._data, self.name, self._threads))

    @classmethod
    def from_file(cls, path: str | os.PathLike, name: str | None = None, threads: int = 1) -> "OnnxAgent":
        """The agent of the ``.onnx`` file ``path``: ``FileNotFoundError`` if nothing is there, ``ValueError`` (one
        line) for a file that is not a graph ``python -m agents.export`` wrote or is beyond the bounds of
        :mod:`~agents.onnx.check`, ``ImportError`` without onnxruntime or onnx. Tensor data in other
        files is read from ``path``'s own folder only. ``threads``: onnxruntime's threads for one call (one
        decision is a tiny batch, as for the torch agents)."""
        from ddz_env.files import input_file

        p = input_file(path, "ONNX agent")
        _onnxruntime()
        with open(p, "rb") as f:
            data = f.read()
        return cls.from_bytes(data, name=name or f"onnx:{os.path.basename(p)}", threads=threads, where=repr(p),
                              folder=os.path.dirname(os.path.abspath(p)))

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "onnx", threads: int = 1, where: str = "ONNX graph",
                   folder: str | None = None) -> "OnnxAgent":
        """The agent of a serialized graph (``ValueError`` naming ``where`` as :meth:`from_file`; ``folder``:
        where its external data may be, None: it may have none)."""
        ort = _onnxruntime()
        model = parse(data, where)  # (the onnx package reads it: onnxruntime only once every check passed)
        meta = {p.key: p.value for p in model.metadata_props}
        if meta.get("ddz_env.format") is None:
            raise ValueError(f"{where} is an ONNX graph but no ddz-env agent (no ddz_env.format in its metadata; "
                             f"python -m agents.export writes one)")
        if meta.get("ddz_env.format") != str(FORMAT):
            raise ValueError(f"{where}: ddz-env ONNX format {meta.get('ddz_env.format')!r}, this version reads {FORMAT}")
        if meta.get("ddz_env.obs_cells") != str(OBS_CELLS) or meta.get("ddz_env.num_actions") != str(NUM_ACTIONS):
            raise ValueError(f"{where}: made for {meta.get('ddz_env.obs_cells')} plane cells and "
                             f"{meta.get('ddz_env.num_actions')} actions; this env has {OBS_CELLS} and {NUM_ACTIONS}")
        data, _ = checked_graph(model, data, where, folder)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3  # (errors only: no warnings on stderr for every session)
        try:
            session = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own kinds (InvalidProtobuf, Fail, InvalidGraph...)
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ValueError(f"{where} is not an ONNX graph onnxruntime can run ({type(e).__name__}: {first[:300]})") \
                from None
        got = {i.name: i.type for i in session.get_inputs()}
        outs = [o.name for o in session.get_outputs()]
        if got != _TYPES or outs != [OUTPUT]:
            raise ValueError(f"{where}: inputs {got} and outputs {outs}; a ddz-env agent graph takes {_TYPES} and "
                             f"returns [{OUTPUT!r}]")
        return cls(session, name=name, kind=meta.get("ddz_env.kind", ""), data=data, threads=int(threads))

    def scores(self, planes: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """The graph's scores (M,) float32 of candidates ``ids`` of rows ``rows`` of ``planes`` (B, 1740) int8.
        The graph is called with at most ``MAX_ROWS`` rows and ``MAX_CANDIDATES`` candidates at once (the sizes
        its load checked it at): a bigger batch in parts, each a run of candidates and the rows they span."""
        if planes.shape[0] <= MAX_ROWS and ids.size <= MAX_CANDIDATES:
            return self._run(planes, rows, ids)
        if ids.size and np.any(np.diff(rows) < 0):  # (the parts are runs of rows: candidates in row order)
            order = np.argsort(rows, kind="stable")
            out = np.empty(ids.size, np.float32)
            out[order] = self.scores(planes, rows[order], ids[order])
            return out
        parts, c = [], 0
        while c < ids.size:
            r0 = int(rows[c])
            end = min(c + MAX_CANDIDATES, int(np.searchsorted(rows, r0 + MAX_ROWS, side="left")))
            r1 = int(rows[end - 1]) + 1
            parts.append(self._run(planes[r0:r1], rows[c:end] - r0, ids[c:end]))
            c = end
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def _run(self, planes: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
        out = self.session.run([OUTPUT], {"planes": planes, "rows": rows, "ids": ids})[0]
        if out.shape != ids.shape or out.dtype != np.float32:
            raise ValueError(f"the ONNX graph {self.name} returned scores {out.dtype} {out.shape} for {ids.size} "
                             f"candidates; a ddz-env agent graph returns one float32 score a candidate")
        return out

    @staticmethod
    def inputs(decisions: Decisions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The graph's inputs of ``decisions``: every candidate of every decision."""
        n = len(decisions)
        planes = np.ascontiguousarray(decisions.observation, dtype=np.int8).reshape(n, OBS_CELLS)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(decisions.legal_starts))
        return planes, rows, np.ascontiguousarray(decisions.legal_ids, dtype=np.int64)

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        """Greedy action of every decision: the scored candidates of the unforced ones in one call."""
        starts, ids = decisions.legal_starts, decisions.legal_ids
        counts = np.diff(starts)
        if (counts == 0).any():
            raise ValueError("OnnxAgent: a decision without a legal action (is this seat on turn?)")
        actions = ids[starts[:-1]].astype(np.int64)  # the only legal id of a forced decision: not scored
        keep = np.flatnonzero(counts > 1)
        if keep.size == 0:
            return actions
        planes, rows, cand = self.inputs(decisions.take(keep) if keep.size < counts.size else decisions)
        scores = self.scores(planes, rows, cand)
        if not np.isfinite(scores).all():
            raise ValueError(f"non-finite scores from the ONNX graph {self.name}: its weights have diverged (NaN or inf)")
        sub_starts = np.zeros(keep.size + 1, np.int64)
        np.cumsum(counts[keep], out=sub_starts[1:])
        actions[keep] = cand[greedy(scores, sub_starts)]
        return actions

    def __repr__(self) -> str:
        return f"OnnxAgent({self.name})"


def from_spec(spec: str | SchemeSpec, **kwargs: Any) -> OnnxAgent:
    """The loader's entry point for ``onnx:PATH`` (no options: all after ``onnx:`` is the path; ``kwargs``:
    ``name``, ``threads``)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    if not spec.target:
        raise ValueError("onnx:PATH needs the path of a .onnx file (python -m agents.export AGENT OUT.onnx writes one)")
    return OnnxAgent.from_file(spec.target, **kwargs)


__all__ = ["OnnxAgent", "from_spec", "greedy", "FORMAT", "INPUTS", "OUTPUT"]
