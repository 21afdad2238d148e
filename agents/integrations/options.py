"""The library learners' options, checked by value in one place before a run starts.

Every learner's ``train(**options)`` takes its own ``DEFAULTS``; an option of the same name means the same
thing in each (``learning_rate``, ``num_envs``, ``state_layers``...), so one table, :data:`CHECKS`, says what
each may hold. :func:`check_options` merges a run's options over a learner's defaults, refuses an unknown
name (did-you-mean) and the first bad value (naming it), and loads every agent spec among ``opponents``
and ``init`` once, so that a typo is said before the run folder exists, not minutes into the run.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..runs.config import did_you_mean
from .targets import TARGETS


def _number(lo: float, hi: float, integer: bool = False, lo_open: bool = False) -> Callable[[Any], bool]:
    def ok(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
            return False
        return math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
    return ok


def _layers(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and 1 <= len(v) <= 8 and all(
        isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= 8192 for w in v)


def _specs(v: Any) -> bool:
    items = [v] if isinstance(v, str) else v
    return isinstance(items, (list, tuple)) and len(items) >= 1 and all(isinstance(x, str) and x for x in items)


_COUNT = (_number(1, 65536, True), "an integer 1..65536")
_BIG = (_number(1, 100_000_000, True), "an integer 1..100,000,000")
_RATE = (_number(0, 1, lo_open=True), "a number in (0, 1]")
_UNIT = (_number(0, 1), "a number 0..1")
_POSITIVE = (_number(0, 1e12, lo_open=True), "a positive number")
_COEF = (_number(0, 10), "a number 0..10")
_LAYERS = (_layers, "a list of 1..8 layer widths, each 1..8192")

#: option -> (its check, what the value must be); the same name means the same thing in every learner
CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "num_envs": _COUNT, "n_envs": _COUNT, "threads": (_number(1, 1024, True), "an integer 1..1024"),
    "decisions_per_batch": _BIG, "steps_per_collect": _BIG, "n_steps": _BIG, "batch": _BIG,
    "minibatch": _BIG, "batch_size": _BIG, "epochs": (_number(1, 100, True), "an integer 1..100"),
    "n_epochs": (_number(1, 100, True), "an integer 1..100"), "repeat": (_number(1, 100, True), "an integer 1..100"),
    "snapshot_every": _BIG,
    "learning_rate": _RATE, "clip_epsilon": _POSITIVE, "eps_clip": _POSITIVE, "vf_coef": (_number(0, 1000), "a number >= 0"),
    "entropy_coeff": _COEF, "ent_coef": _COEF, "bid_entropy_coeff": _COEF, "bid_epsilon": _UNIT,
    "gae_lambda": _UNIT, "gamma": _UNIT, "opponent_share": _UNIT, "reward_scale": _POSITIVE, "score_scale": _POSITIVE,
    "target": (lambda v: v in TARGETS, "'sign_play' (win/loss in play, score / score_scale in bids), 'scale' "
               "(score / score_scale), 'sign' (win/loss) or 'none' (the rulebook score): agents.integrations.targets"),
    "state_layers": _LAYERS, "head_layers": _LAYERS, "critic_layers": _LAYERS,
    "central_critic": (lambda v: isinstance(v, bool), "true or false"), "hand_after": (lambda v: isinstance(v, bool), "true or false"),
    "vector_env": (lambda v: isinstance(v, bool), "true or false"),
    "whole_hands": (lambda v: isinstance(v, bool), "true or false"),
    "opponents": (_specs, "an agent spec or a list of them ('self': a frozen copy of the policy, where taken)"),
    "init": (lambda v: v is None or isinstance(v, str) and bool(v), "null or a DMC agent spec ('pretrained', a run)"),
    "checkpoint_seconds": _POSITIVE, "progress_seconds": _POSITIVE,
    "collectors": (_number(0, 64, True), "an integer 0..64 (0: collect in the learner's process)"),
}


#: option -> its one-line help (``train.py --config NAME --help`` lists a learner's options with these)
HELP: dict[str, str] = {
    "num_envs": "tables stepped together (one batched env)",
    "threads": "torch threads of the learner's process",
    "decisions_per_batch": "decisions collected before each update",
    "minibatch": "decisions per gradient step",
    "epochs": "passes over each batch",
    "snapshot_every": "batches between frozen copies of the policy ('self' opponents)",
    "learning_rate": "Adam's step size (sb3: null, its own default)",
    "clip_epsilon": "PPO's ratio clip",
    "vf_coef": "weight of the value loss",
    "entropy_coeff": "entropy bonus of play",
    "bid_entropy_coeff": "entropy bonus of bids, doubles and redoubles (null: entropy_coeff's)",
    "bid_epsilon": "probability of a uniform bid, double or redouble (the behaviour policy explores them)",
    "gae_lambda": "GAE's lambda (gamma 1 but where said)",
    "gamma": "discount per decision",
    "opponent_share": "share of hands with one or two seats held by opponents",
    "reward_scale": "reward = score x this (the library's own returns)",
    "score_scale": "score / this: the bids' target (and every decision's with target 'scale')",
    "target": "a hand's targets: sign_play, scale, sign or none (agents/integrations/targets.py)",
    "state_layers": "state encoder widths", "head_layers": "move-scoring head widths",
    "critic_layers": "central critic widths (central_critic)",
    "central_critic": "a critic that also sees the other hands (training only; the policy sees its seat's)",
    "hand_after": "the head also sees the hand each move leaves",
    "vector_env": "rllib: the tables as one batched env (else one PettingZoo env a table)",
    "whole_hands": "rllib: the runner steps the tables in its own loop and gives the learner whole hands",
    "opponents": "agent specs at the other seats ('self': a frozen copy of the policy)",
    "init": "start from a DMC agent ('pretrained', a run folder); null: from scratch",
    "checkpoint_seconds": "seconds between checkpoints", "progress_seconds": "seconds between progress lines",
    "collectors": "collector processes (0: collect in the learner's process)",
}


def options_help(learner: str, defaults: dict, own: dict | None = None) -> str:
    """A learner's options, one line each: ``options.NAME``, its default, its help (``train.py --help``);
    ``own``: its own knobs' (check, what, help), as :func:`check_options` takes them."""
    from ..runs.config import show

    helps = {**HELP, **{k: h for k, (_, _, h) in (own or {}).items()}}
    rows = [(f"options.{k}", "null" if v is None else show(list(v) if isinstance(v, tuple) else v), helps[k])
            for k, v in defaults.items()]
    wide = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    return f"{learner}'s options (--set options.NAME=VALUE):\n" + "\n".join(
        f"  {a:{wide[0]}s}  {b:{wide[1]}s}  {c}" for a, b, c in rows)


#: an idea's old names in one learner or another -> its one name in every learner (the batch geometry, the
#: entropy bonus, the clip): an old name still works this release, with a one-line deprecation
RENAMED: dict[str, str] = {
    "n_envs": "num_envs", "steps_per_collect": "decisions_per_batch", "batch": "decisions_per_batch",
    "batch_size": "minibatch", "n_epochs": "epochs", "repeat": "epochs", "ent_coef": "entropy_coeff",
    "eps_clip": "clip_epsilon",
}


#: an idea's old name whose values were named otherwise too -> (its one name, old value -> new value)
RENAMED_VALUES: dict[str, tuple[str, dict[str, str]]] = {
    "reward": ("target", {"score": "none", "win": "sign", "sign_play": "sign_play"}),  # (RLlib's, before)
}


def renamed(learner: str, options: dict, defaults: dict) -> dict:
    """``options`` with each old name (:data:`RENAMED`) the learner no longer takes given its one name, and a
    one-line deprecation for each on the ``ddz.train`` log; ``ValueError`` if both names are given."""
    import logging

    out = dict(options)
    for old, new in RENAMED.items():
        if old in out and old not in defaults and new in defaults:
            if new in out:
                raise ValueError(f"{learner}: options {old!r} and {new!r} are one option: give {new!r} only")
            logging.getLogger("ddz.train").warning("%s: option %r is now %r (the old name works this release)",
                                                   learner, old, new)
            out[new] = out.pop(old)
    for old, (new, values) in RENAMED_VALUES.items():
        if old in out and old not in defaults and new in defaults:
            if new in out:
                raise ValueError(f"{learner}: options {old!r} and {new!r} are one option: give {new!r} only")
            value = out.pop(old)
            if value not in values:
                raise ValueError(f"{learner}: option {old!r} (now {new!r}) must be one of {', '.join(values)}, "
                                 f"got {value!r}")
            logging.getLogger("ddz.train").warning("%s: option %r is now %r: %s: %r (the old name works this "
                                                   "release)", learner, old, new, new, values[value])
            out[new] = values[value]
    return out


def check_options(learner: str, options: dict, defaults: dict, load_specs: bool = True,
                  own: dict[str, tuple[Callable[[Any], bool], str, str]] | None = None) -> dict:
    """``options`` over ``defaults``, each value checked (``ValueError`` naming the learner and the option);
    with ``load_specs`` every agent spec among ``opponents`` and ``init`` is loaded once. An idea's old name
    is read as its one name (:func:`renamed`). ``own``: a learner's own knobs, ``name -> (check, what the value
    must be, help)``, beside the shared ones."""
    own = own or {}
    checks = {**CHECKS, **{k: (c, what) for k, (c, what, _) in own.items()}}
    unchecked = sorted(set(defaults) - (set(CHECKS) & set(HELP)) - set(own))
    if unchecked:  # (a learner's option cannot exist without its check and help: said at its first use, tests too)
        raise TypeError(f"{learner}: option {unchecked[0]!r} has no check and help in agents.integrations.options "
                        f"(CHECKS, HELP)")
    options = renamed(learner, options, defaults)
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"{learner}: unknown option {unknown[0]!r}{did_you_mean(unknown[0], defaults)}; the "
                         f"options: {', '.join(defaults)}")
    o = {**defaults, **options}
    for k, v in o.items():
        if k in checks and not (v is None and defaults.get(k) is None):  # (None: the learner's own choice)
            ok, what = checks[k]
            if not ok(v):
                raise ValueError(f"{learner}: option {k!r} must be {what}, got {v!r}")
    if load_specs:
        from ..loader import load

        specs = o.get("opponents") or []
        for spec in [specs] if isinstance(specs, str) else specs:
            if spec != "self":
                try:
                    load(spec)
                except (ValueError, FileNotFoundError, ImportError, TypeError) as e:
                    raise ValueError(f"{learner}: option 'opponents': {e}") from None
        if o.get("init") is not None:
            from .move_policy import MoveScoringPolicy

            try:
                MoveScoringPolicy.from_dmc(o["init"])
            except (ValueError, FileNotFoundError, TypeError, KeyError) as e:
                raise ValueError(f"{learner}: option 'init': {e}") from None
    return o


__all__ = ["CHECKS", "HELP", "RENAMED", "RENAMED_VALUES", "check_options", "options_help", "renamed"]
