"""``agents.load("rllib:DIR")`` without ray: the move-scoring policy of an RLlib run folder or checkpoint.

* A run folder of ``train.py --config rllib`` (:func:`agents.integrations.rllib.module.train`): its
  ``policy.pt``, the ``"movescore"`` export, read weights-only as every checkpoint of ours.
* An RLlib checkpoint (``algo.save_to_path``, or a module's folder inside one): RLlib keeps a module's
  weights as a pickle (``module_state.pkl``), and unpickling a file can run code. So it is read only with
  ``rllib:DIR?trust=yes``, typed by the user for a file they trust; without it the error says so. The
  network's layers are read from the weights' shapes, and the weights are checked as an export's are.
"""
from __future__ import annotations

import os
from typing import Any

import torch

from ...loader import SchemeSpec, parse_spec
from ..move_policy import AGENT_KIND, MoveScoringAgent, MoveScoringPolicy, load_policy, policy_from_weights

#: the module id of :mod:`agents.integrations.rllib.module`'s self-play (one module for the three seats)
MODULE_ID = "shared"
POLICY_FILE = "policy.pt"


PREFIX = "policy."


#: the most folders :func:`_module_state` looks through (an RLlib checkpoint holds a handful: its learner
#: group, learner, module folders); ``rllib:/`` would otherwise walk the whole disk
MAX_FOLDERS = 10_000


def _module_state(path: str) -> list[str]:
    """The module weight files inside an RLlib checkpoint folder (the self-play module's first). The walk
    follows no symbolic link (``os.walk``'s default): a folder with two links to itself made the recursive glob
    used before walk 2^40 paths (no answer within minutes); a linked folder is not looked into."""
    if os.path.isfile(os.path.join(path, "module_state.pkl")):
        return [os.path.join(path, "module_state.pkl")]
    found, folders = [], 0
    for folder, _dirs, files in os.walk(path, followlinks=False):
        folders += 1
        if folders > MAX_FOLDERS:
            raise ValueError(f"rllib checkpoint {path!r}: more than {MAX_FOLDERS:,} folders inside (not an RLlib "
                             f"checkpoint; name the checkpoint's own folder)")
        if "module_state.pkl" in files:
            found.append(os.path.join(folder, "module_state.pkl"))
    found.sort()
    return [f for f in found if os.path.basename(os.path.dirname(f)) == MODULE_ID] or found


def policy_from_rllib(path: str | os.PathLike, trust: bool = False) -> MoveScoringPolicy:
    """The :class:`MoveScoringPolicy` of ``path`` (see the module doc). ``FileNotFoundError`` for no such
    folder, ``ValueError`` naming it for anything else (an RLlib checkpoint without ``trust``, another
    RLModule, weights of another layout or action space)."""
    path = os.fspath(path)
    where = repr(path)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"rllib checkpoint {where} not found (rllib:DIR takes a folder: a run folder of "
                                f"train.py --config rllib, or an RLlib checkpoint)")
    if os.path.isfile(os.path.join(path, POLICY_FILE)):
        return load_policy(os.path.join(path, POLICY_FILE))
    found = _module_state(path)
    if not found:
        raise ValueError(f"rllib checkpoint {where}: neither a policy.pt nor an RLlib module_state.pkl inside (not a "
                         f"run folder of train.py --config rllib, nor an RLlib checkpoint of the new API stack)")
    if len(found) > 1:
        raise ValueError(f"rllib checkpoint {where}: {len(found)} modules inside; name one of their folders: "
                         f"{', '.join(os.path.dirname(f) for f in found[:3])}")
    if not trust:
        raise ValueError(f"rllib checkpoint {where}: RLlib keeps its weights as a pickle ({found[0]}), and loading "
                         f"a pickle can run code; if you trust the file, load 'rllib:{path}?trust=yes'")
    import pickle

    from ddz_env.files import input_file

    input_file(found[0], "rllib module state")  # a regular file of bounded size: no FIFO, device or 10 GB file
    try:
        with open(found[0], "rb") as f:
            state = pickle.load(f)  # (trusted by the user: rllib:DIR?trust=yes)
    except Exception as e:  # noqa: BLE001 -- a corrupt pickle raises any kind
        raise ValueError(f"rllib checkpoint {where}: {found[0]} does not load ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and hasattr(v, "shape") for k, v in state.items()):
        raise ValueError(f"rllib checkpoint {where}: {found[0]} is not a module's weights")
    weights = {k[len(PREFIX):]: torch.as_tensor(v) for k, v in state.items() if k.startswith(PREFIX)}
    if not weights:
        raise ValueError(f"rllib checkpoint {where}: not a MoveScoringRLModule (its module holds "
                         f"{', '.join(sorted(state)[:3]) or 'nothing'}...: another RLModule)")
    return policy_from_weights(weights, f"rllib checkpoint {where}")


def from_spec(spec: str | SchemeSpec, **kwargs: Any) -> MoveScoringAgent:
    """The loader's entry point for ``rllib:DIR`` and ``rllib:DIR?trust=yes`` (read by `agents.loader.parse_spec`):
    a greedy :class:`MoveScoringAgent` (``kwargs``: its ``name``, ``threads``)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    if spec.query is not None and spec.options not in ((("trust", "yes"),), (("trust", "no"),)):
        raise ValueError(f"agent spec {spec.text!r}: rllib:DIR takes one option, ?trust=yes (got {spec.query!r})")
    trust = spec.options == (("trust", "yes"),)
    return MoveScoringAgent(policy_from_rllib(spec.target, trust=trust), **{"name": f"{AGENT_KIND}:rllib", **kwargs})


__all__ = ["policy_from_rllib", "from_spec", "MODULE_ID", "POLICY_FILE"]
