"""The algorithm table: the one seam where ``train.py`` chooses a learner, a config's ``algo`` key.

==============  =========================================================  ==================================
``algo``        learner                                                    config
==============  =========================================================  ==================================
``dmc``         our DouZero-style Deep Monte-Carlo trainer (the default)   ``agents.dmc.config.TrainConfig``
``ppo``         our PPO over compact legal sets, self-play                 :class:`LibraryConfig`
``sb3``         sb3-contrib's MaskablePPO, one seat                        :class:`LibraryConfig`
``tianshou``    Tianshou's PPO, one seat                                   :class:`LibraryConfig`
``torchrl``     TorchRL's PPO: its env, collector, GAE, ClipPPOLoss          :class:`LibraryConfig`
``rllib``       RLlib's PPO (new API stack), self-play                      :class:`LibraryConfig`
==============  =========================================================  ==================================

A library learner (and ``ppo``, ours) is a module with ``train(seconds, run_dir, *, decisions, seed,
resume, progress, **options) -> dict`` (to ``seconds`` of wall time or ``decisions`` learned from, the first
reached; the move-scoring policy in that library's idiom; its checkpoints in the run
folder, resumable; its final policy as ``policy.pt`` in the ``"movescore"`` export format) and, for the
options it takes, a ``DEFAULTS`` dict. :mod:`agents.runs.library` runs it in a run folder like DMC's
(``config.yaml``, ``log.csv``, ``eval.csv`` with periodic evaluation, the policy ``agents.load`` seats).
A library learner's config is :class:`LibraryConfig`: the run's keys, and ``options`` handed to its
``train`` as they are (``--set options.lr=1e-3``; its ``DEFAULTS`` name them).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .config import ConfigSchema, did_you_mean, load_yaml
from .config import key as _key

@dataclass(frozen=True)
class Learner:
    """One learner's record: where ``train.py`` finds it and what it needs. Its options, their defaults and
    checks are its module's ``DEFAULTS`` with :mod:`agents.integrations.options`' ``CHECKS`` and ``HELP``
    (``train.py --config NAME --help`` lists them); a new library is its folder and one record here."""

    module: str                      # the module that trains it (``train(seconds, run_dir, ...)``)
    label: str                       # what it is, in tables and closing lines
    requires: tuple[str, ...] = ()   # the modules its library brings (checked before a run folder is made)
    extra: str = ""                  # the extra that installs them
    small: dict = field(default_factory=dict)  # options of a short run on a small network (the contract test's)


_SMALL_NET = {"state_layers": [64], "head_layers": [32]}
#: algo -> its record
LEARNERS: dict[str, Learner] = {
    "dmc": Learner("agents.dmc.learner.trainer", "DMC (Deep Monte-Carlo), ours"),
    "ppo": Learner("agents.ppo.learner", "PPO over compact legal sets, self-play, ours (no RL library)",
                   small={"num_envs": 8, "decisions_per_batch": 256, "minibatch": 128, **_SMALL_NET}),
    "sb3": Learner("agents.integrations.sb3.policy", "sb3-contrib MaskablePPO, one seat", ("sb3_contrib", "stable_baselines3"),
                   "marl", {"num_envs": 2, "decisions_per_batch": 32, "minibatch": 32, "epochs": 1, **_SMALL_NET}),
    "tianshou": Learner("agents.integrations.tianshou.nets", "Tianshou PPO, one seat", ("tianshou",), "marl",
                        {"num_envs": 2, "decisions_per_batch": 64, "minibatch": 64, "opponents": ["random"],
                         "bid_entropy_coeff": 0.05, **_SMALL_NET}),
    "torchrl": Learner("agents.integrations.torchrl.learner",
                       "TorchRL's PPO: its env, collector, GAE and ClipPPOLoss, self-play", ("torchrl", "tensordict"),
                       "marl", {"num_envs": 8, "decisions_per_batch": 256, "minibatch": 128, **_SMALL_NET}),
    "rllib": Learner("agents.integrations.rllib.module", "RLlib PPO, self-play", ("ray",), "rllib",
                     {"num_envs": 8, "decisions_per_batch": 256, "minibatch": 128, **_SMALL_NET}),
}
#: algo -> (the module that trains it, what it is): the records' first two fields
ALGOS: dict[str, tuple[str, str]] = {name: (r.module, r.label) for name, r in LEARNERS.items()}
DEFAULT_ALGO = "dmc"
#: algo -> the modules its library brings and the extra that installs them (checked before a run folder is made)
REQUIRES: dict[str, tuple[tuple[str, ...], str]] = {name: (r.requires, r.extra) for name, r in LEARNERS.items()
                                                     if r.requires}
#: the shortest time between evaluations of a library run (an evaluation of 100 deals takes seconds)
MIN_EVAL_EVERY = 10.0


def check_algo(algo: Any) -> str:
    """``algo`` if it names a learner, else ``ValueError`` with a did-you-mean."""
    if not isinstance(algo, str) or algo not in ALGOS:
        raise ValueError(f"config key 'algo': unknown learner {algo!r}{did_you_mean(str(algo), ALGOS)}; the "
                         f"learners are {', '.join(ALGOS)}")
    return algo


def algo_of(data: Any, overrides: list[str] | None = None) -> str:
    """The learner a config's data (a dict, or a YAML file's path) and ``--set`` overrides choose."""
    if isinstance(data, (str, Path)):
        p = Path(data)
        try:
            data = load_yaml(p.read_text(), f"config {str(p)!r}") if p.is_file() else {}
        except Exception:  # noqa: BLE001 -- bad syntax, size, encoding: the config loader says which, by name
            data = {}
    algo = (data or {}).get("algo", DEFAULT_ALGO) if isinstance(data, dict) else DEFAULT_ALGO
    for text in overrides or []:
        k, sep, v = text.partition("=")
        if sep and k.strip() == "algo":
            algo = load_yaml(v.strip(), "config key 'algo'")
    return check_algo(algo)


@dataclass
class LibraryConfig:
    """A library learner's run. ``options`` go to its ``train`` as they are."""

    name: str = _key("library", "run name: the run folder is runs/<name>-<YYYYmmdd-HHMMSS>", "run")
    algo: str = _key("torchrl", f"the learner: {', '.join(a for a in ALGOS if a != 'dmc')} (dmc has its own keys)")
    seed: int = _key(0, "seed of the learner (its deals, its initial weights)")
    max_seconds: float = _key(600.0, "wall time of training, the run's sessions together (evaluations not counted); "
                              "0: no time limit (max_decisions ends the run)", "learner")
    max_decisions: int = _key(0, "> 0: also stop once the learner has learned from this many decisions, the run's "
                              "sessions together (the run ends at the first of the two budgets)")
    options: dict = _key({}, "the learner's options (its train()'s DEFAULTS: learning rate, batch, self-play...)")
    eval_every_seconds: float = _key(0.0, "seconds of training between evaluations of the policy (eval.csv); 0: "
                                     "only at the end", "evaluation")
    eval_every_decisions: int = _key(0, "> 0: also evaluate every this many decisions learned (with "
                                     "eval_every_seconds: whichever comes first)")
    eval_at_start: bool = _key(False, "also evaluate the untrained policy (0 decisions): the curve's first point")
    eval_deals: int = _key(100, "seeded deals per evaluation (duplicate, x6 hands)")
    eval_seed: int = _key(10_000, "seed of the evaluation deals (fixed for the whole run)")
    eval_opponents: list[str] = _key(["random", "rule"], "evaluation opponents (agents.load specs)")

    def validate(self) -> "LibraryConfig":
        def bad(key: str, why: str) -> ValueError:
            return ValueError(f"config key {key!r}: {why} (got {getattr(self, key)!r})")

        check_algo(self.algo)
        if self.algo == "dmc":
            raise bad("algo", "a library learner; algo 'dmc' takes the DMC config (train.py --help lists its keys)")
        if not self.name or any(c in self.name for c in "/\\ ") or not self.name.isprintable() or len(self.name) > 100:
            raise bad("name", "a non-empty printable name of at most 100 characters, without slashes or spaces")
        for k in ("seed", "eval_seed"):
            if not 0 <= getattr(self, k) < 2**32:
                raise bad(k, "must be in [0, 2**32)")
        if not 0 <= self.max_seconds < float("inf"):
            raise bad("max_seconds", "must be a number of seconds >= 0 (0: no time limit)")
        for k in ("max_decisions", "eval_every_decisions"):
            if isinstance(getattr(self, k), bool) or not isinstance(getattr(self, k), int) \
                    or not 0 <= getattr(self, k) <= 10**13:
                raise bad(k, "must be an integer >= 0 (0: none)")
        if self.max_seconds == 0 and self.max_decisions == 0:
            raise bad("max_seconds", "must be positive unless max_decisions is (a run needs a budget)")
        if not (self.eval_every_seconds == 0 or MIN_EVAL_EVERY <= self.eval_every_seconds < float("inf")):
            raise bad("eval_every_seconds", f"must be 0 (only at the end) or at least {MIN_EVAL_EVERY:g} seconds")
        if not 1 <= self.eval_deals <= 1_000_000:
            raise bad("eval_deals", "must be in 1 .. 1,000,000")
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


LIBRARY_SCHEMA = ConfigSchema(LibraryConfig, resume_fixed=("algo",))

__all__ = ["ALGOS", "LEARNERS", "Learner", "REQUIRES", "MIN_EVAL_EVERY", "DEFAULT_ALGO", "LibraryConfig", "LIBRARY_SCHEMA", "algo_of", "check_algo"]
