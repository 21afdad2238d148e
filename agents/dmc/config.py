"""The DMC trainer's settings: :class:`TrainConfig`, one dataclass field per key.

Loading (YAML, ``--set key=value``, ``--help``, the shipped configs by name, resume checks) is
:class:`agents.runs.config.ConfigSchema`'s, for any trainer; this module adds the keys, their
checks (``validate``), the keys a resumed run cannot change and the keys of older files
(``bidding`` / ``doubling``, now part of ``rules``). An unknown key, a value of the wrong type or
an out-of-range value raises ``ValueError`` naming the key.
"""
from __future__ import annotations

import math
import typing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..runs.config import ConfigSchema, did_you_mean, shipped_config_dir
from ..runs.config import key as _key

NET_NAMES = ("landlord", "farmer_down", "farmer_up", "bidding")
POSITIONS = ("landlord", "farmer_down", "farmer_up")


@dataclass
class TrainConfig:
    """Every training setting. Each field's ``metadata["help"]`` is its one-line meaning
    (``--help`` lists them); ``metadata["section"]`` starts a group."""

    name: str = _key("dmc", "run name: the run folder is runs/<name>-<YYYYmmdd-HHMMSS>", "run")
    algo: str = _key("dmc", "the learner (agents.runs.algos): dmc here; a library learner (sb3, tianshou, torchrl, "
                     "rllib) has its own keys: train.py --config torchrl --help")
    seed: int = _key(0, "seed of the deals, the exploration and the initial weights")
    device: str = _key("cpu", '"cpu", "cuda" or "cuda:N": learner and actor inference')
    torch_threads: int = _key(1, "intra-op threads of each process (learner and every actor)")
    rules: str = _key("rulebook", 'the hands\' rules (ddz_env.Rules): "rulebook"; "douzero" (a fixed landlord at bid '
                      '1, no doubling: DouZero\'s setting); or fields, e.g. "doubling=false"', "environment")
    num_actors: int = _key(1, "actor processes; 0: act inline in the learner process (deterministic)", "actors")
    num_envs: int = _key(64, "tables per actor (one VectorDouDizhu); one forward pass serves them all")
    epsilon: float = _key(0.01, "epsilon-greedy exploration while acting (play phase)")
    bid_epsilon: float = _key(0.1, "exploration of bid / double / redouble (a greedy all-pass start voids every hand)")
    opponents: list[str] = _key([], "fixed opponents mixed into self-play (agents.load specs)")
    opponent_share: float = _key(0.0, "share of the hands in which one of them holds the B seats of a duplicate seating")
    pool_every: int = _key(0, "> 0: every this many of its own decisions an actor keeps a copy of the weights it acts "
                           "with in its opponent pool (past selves); 0: no pool")
    pool_size: int = _key(4, "past selves an actor keeps (the oldest is dropped)")
    pool_share: float = _key(0.5, "share of the opponent hands (opponent_share) a past self plays instead of one of "
                             "'opponents', once the pool holds one")
    learn_from_opponents: bool = _key(True, "the opponents' decisions are training samples too")
    num_buffers: int = _key(16, "shared-memory batch buffers, split among the actor processes (at least 2 each)")
    sync_every: int = _key(1, "actors refresh their weights from the learner every this many batches they send")
    backend: str = _key("local", '"local": actor processes on this machine (inline with num_actors 0); '
                        '"ray": Ray actors on the nodes of a cluster')
    ray_address: str = _key("", 'with backend "ray": the cluster to join ("auto": the running one); "": start Ray here')
    total_frames: int = _key(1_000_000, "stop after this many decisions produced by the actors", "learner")
    max_seconds: float = _key(0.0, "> 0: also stop once the run has trained this many seconds, its sessions together "
                               "(the checkpoint keeps the count: --resume continues a timed run to its end)")
    batch_size: int = _key(1024, "transitions per update")
    optimizer: str = _key("adam", '"adam" or "rmsprop" (DouZero: rmsprop, lr 1e-4, alpha 0.99, eps 1e-5)')
    lr: float = _key(3e-4, "learning rate")
    rmsprop_alpha: float = _key(0.99, "RMSprop smoothing constant")
    optim_eps: float = _key(1e-5, "epsilon of the optimizer's denominator")
    max_grad_norm: float = _key(40.0, "gradient norm clip")
    target: str = _key("scale", 'Monte-Carlo target of the seat\'s R19 score: "scale" (score / score_scale), '
                       '"sign" (win/loss), "none" (raw), or "sign_play" (win/loss for the play networks, '
                       'score / score_scale for bid, double and redouble)', "targets")
    score_scale: float = _key(8.0, 'divisor of the score with target "scale"')
    state_layers: list[int] = _key([512, 256], "state encoder widths (run once per decision)", "network")
    head_layers: list[int] = _key([256, 128], "Q head widths over (state, action), run per candidate")
    history_lstm: int = _key(0, "> 0: an LSTM of this width over the 15 history planes (DouZero: 128)")
    hand_prediction: float = _key(0.0, "> 0: each network also predicts the next and the previous seat's cards "
                                  "(counts per rank) from its state encoding, trained on the true hands with this "
                                  "loss weight (a training target only, never an input: R21); 0: off")
    value_head: str = _key("q", '"q": one output regressed on the target; "decomposed": P(won / lost / void) and '
                           'the expected score if won and if lost, Q = P(won) V_won + P(lost) V_lost (needs target '
                           '"scale")')
    action_features: str = _key("move", '"move": the move\'s cards and type; "hand_after": + the hand it leaves')
    precision: str = _key("fp32", 'the learner\'s matmuls: "fp32", or "bf16" (autocast; weights stay fp32; rows '
                          'padded to shape buckets so kernels are reused; fast only on CPUs with AVX512-BF16 / AMX)')
    actor_precision: str = _key("fp32", 'the actors\' matmuls: "fp32" or "bf16" (an actor\'s row counts change at '
                                'every step: on a CPU bf16 pays for every new shape)')
    eval_every: int = _key(0, "frames between evaluations of the learner's weights (eval.csv); 0: none", "evaluation")
    eval_at_start: bool = _key(False, "also evaluate the untrained weights (frames 0): the curve's first point")
    eval_deals: int = _key(200, "seeded deals per evaluation (x6 hands in duplicate, x2 in fixed-landlord)")
    eval_seed: int = _key(10_000, "seed of the evaluation deals (fixed for the whole run)")
    eval_opponents: list[str] = _key(["rule", "random"], "evaluation opponents (agents.load specs)")
    eval_replays: int = _key(0, "hands of this many evaluation deals kept as hand records (run/replays/; "
                                "open with python -m agents.play.web --replays DIR)")
    log_every_frames: int = _key(100_000, "frames between log.csv rows and log lines (at the same frames in "
                                 "every run of a config); 0: every log_every seconds", "bookkeeping")
    log_every: float = _key(10.0, "seconds between log.csv rows and log lines when log_every_frames is 0")
    checkpoint_every: int = _key(200_000, "frames between checkpoints (and one at the end, and on Ctrl-C or SIGTERM)")
    checkpoint_every_seconds: float = _key(300.0, "> 0: also a checkpoint once this many seconds passed since the "
                                           "last, whichever of it and checkpoint_every comes first (at most this "
                                           "much work unsaved); 0: by frames only")
    keep_checkpoints: bool = _key(False, "keep every checkpoint (else only the latest, plus the final one)")

    # ------------------------------------------------------------------ validation
    def validate(self) -> "TrainConfig":
        def bad(key: str, why: str) -> ValueError:
            return ValueError(f"config key {key!r}: {why} (got {getattr(self, key)!r})")

        if self.algo != "dmc":
            from ..runs.algos import check_algo

            check_algo(self.algo)
            raise bad("algo", "'dmc' with these keys; a library learner's config has its own (train.py --config "
                              f"{self.algo} --help)")
        for key in _FLOAT_KEYS:  # inf and nan pass every comparison below: refuse them first
            if not math.isfinite(getattr(self, key)):
                raise bad(key, "must be a finite number")
        try:
            self.rules = self.rules_value().name  # (a preset's name when the fields are one)
        except (TypeError, ValueError) as e:
            raise bad("rules", str(e)) from None
        if not self.name or any(c in self.name for c in "/\\ ") or not self.name.isprintable() or len(self.name) > 100:
            raise bad("name", "a non-empty printable name of at most 100 characters, without slashes or spaces")
        for key in ("seed", "eval_seed"):
            if not 0 <= getattr(self, key) < 2**32:
                raise bad(key, "must be in [0, 2**32)")
        if not (self.device == "cpu" or self.device.startswith("cuda")):
            raise bad("device", "'cpu' or 'cuda[:n]'")
        for key in ("num_envs", "batch_size", "total_frames", "num_buffers", "sync_every", "torch_threads",
                    "checkpoint_every"):
            if getattr(self, key) < 1:
                raise bad(key, "must be at least 1")
        if self.num_actors < 0:
            raise bad("num_actors", "must be >= 0")
        for key, (most, why) in RESOURCE_BOUNDS.items():
            value = getattr(self, key)
            if (max(value, default=0) if isinstance(value, list) else value) > most:
                raise bad(key, f"at most {most:,}: {why}")
        if self.backend not in ("local", "ray"):
            raise bad("backend", "'local' or 'ray'")
        if self.backend == "ray" and self.num_actors < 1:
            raise bad("num_actors", "backend 'ray' needs at least 1 actor")
        if self.eval_replays < 0:
            raise bad("eval_replays", "must be >= 0")
        if self.opponent_share > 0 and not self.opponents and not self.pool_every:
            raise bad("opponent_share", "> 0 needs at least one entry in 'opponents' (or a pool: pool_every > 0)")
        if self.pool_every < 0:
            raise bad("pool_every", "must be >= 0 (0: no pool)")
        if self.pool_size < 1:
            raise bad("pool_size", "must be at least 1")
        if self.pool_every and self.opponent_share == 0:
            raise bad("pool_every", "a pool plays in the opponent hands: set opponent_share > 0")
        if self.pool_every and not self.opponents and self.pool_share < 1:
            raise bad("pool_share", "must be 1 when 'opponents' is empty (the pool plays every opponent hand)")
        for key in ("epsilon", "bid_epsilon", "opponent_share", "pool_share"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise bad(key, "must be in [0, 1]")
        if self.optimizer not in ("adam", "rmsprop"):
            raise bad("optimizer", "'adam' or 'rmsprop'")
        for key in ("lr", "max_grad_norm", "optim_eps", "score_scale"):
            if getattr(self, key) <= 0:
                raise bad(key, "must be > 0")
        if not 0.0 <= self.rmsprop_alpha < 1.0:
            raise bad("rmsprop_alpha", "must be in [0, 1)")
        if self.target not in ("scale", "sign", "none", "sign_play"):
            raise bad("target", "'scale', 'sign', 'none' or 'sign_play'")
        if any(int(x) < 1 for x in self.state_layers):
            raise bad("state_layers", "a list of positive layer widths (may be empty)")
        if not self.head_layers or any(int(x) < 1 for x in self.head_layers):
            raise bad("head_layers", "a non-empty list of positive layer widths")
        if self.value_head not in ("q", "decomposed"):
            raise bad("value_head", "'q' or 'decomposed'")
        if self.value_head == "decomposed" and self.target != "scale":
            raise bad("value_head", "'decomposed' learns the outcome from the score's sign and the values from "
                                    "score / score_scale: set target=scale")
        if self.action_features not in ("move", "hand_after"):
            raise bad("action_features", "'move' or 'hand_after'")
        for key in ("precision", "actor_precision"):
            if getattr(self, key) not in ("fp32", "bf16"):
                raise bad(key, "'fp32' or 'bf16'")
        if self.hand_prediction < 0:
            raise bad("hand_prediction", "must be >= 0 (0: off)")
        if self.history_lstm < 0:
            raise bad("history_lstm", "must be >= 0")
        if self.eval_every < 0:
            raise bad("eval_every", "must be >= 0 (0: no evaluation)")
        if self.eval_deals < 1:
            raise bad("eval_deals", "must be at least 1")
        if self.eval_every and not self.eval_opponents:
            raise bad("eval_opponents", "at least one opponent when eval_every > 0")
        if self.max_seconds < 0:
            raise bad("max_seconds", "must be >= 0")
        if self.checkpoint_every_seconds < 0:
            raise bad("checkpoint_every_seconds", "must be >= 0 (0: checkpoints by frames only)")
        if self.log_every <= 0:
            raise bad("log_every", "must be > 0")
        if self.log_every_frames < 0:
            raise bad("log_every_frames", "must be >= 0 (0: every log_every seconds)")
        if self.num_actors > 0 and self.num_buffers < 2:
            raise bad("num_buffers", "at least 2 with actor processes")
        return self

    def check_agents(self) -> "TrainConfig":
        """Load every agent spec the run will seat (``opponents``; ``eval_opponents`` when it evaluates), so
        that a mistyped one is a ``ValueError`` naming the key before anything starts (did-you-mean as
        elsewhere), not an actor dying three times or an evaluation that warns and never runs."""
        from ..loader import load

        keys = [("opponents", self.opponents)] + ([("eval_opponents", self.eval_opponents)] if self.eval_every else [])
        for key, specs in keys:
            for spec in specs:
                try:
                    load(spec)
                except (ValueError, FileNotFoundError, ImportError, TypeError) as e:
                    raise ValueError(f"config key {key!r}: {e}") from None
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def rules_value(self):
        """``rules`` as a :class:`ddz_env.rules.Rules`."""
        from ddz_env.rules import Rules

        return Rules.of(self.rules)

    def autocast(self, actor: bool = False):
        """The autocast context of ``precision`` (the learner) or, with ``actor``, of ``actor_precision``
        (a no-op for fp32)."""
        import contextlib

        import torch

        if (self.actor_precision if actor else self.precision) == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda" if self.device.startswith("cuda") else "cpu", dtype=torch.bfloat16)

    def model_kwargs(self) -> dict[str, Any]:
        kw = {"state_layers": list(self.state_layers), "head_layers": list(self.head_layers),
              "history_lstm": self.history_lstm, "hand_after": self.action_features == "hand_after"}
        if self.value_head != "q":
            kw["value_head"] = self.value_head
        if self.hand_prediction > 0:
            kw["predict_hands"] = True
        return kw


#: the most each resource key may ask for, and why: such values were accepted and failed only later (a
#: run of num_envs=1e7 allocates 17 GB of planes per actor before its first step)
RESOURCE_BOUNDS = {
    "num_actors": (512, "one process each (a cluster of Ray nodes included)"),
    "num_envs": (16_384, "tables per actor: 28 MB of planes and 400 MB of dense masks at the bound"),
    "batch_size": (65_536, "transitions per update: 460 MB of float planes at the bound"),
    "num_buffers": (4_096, "each holds a whole batch in shared memory"),
    "torch_threads": (256, "threads of each process"),
    "state_layers": (8_192, "a layer's width"),
    "head_layers": (8_192, "a layer's width"),
    "history_lstm": (4_096, "the LSTM's width"),
    "eval_deals": (1_000_000, "deals of one evaluation"),
    "pool_size": (64, "past selves each actor holds in memory"),
}
_FLOAT_KEYS = tuple(k for k, t in typing.get_type_hints(TrainConfig).items() if t is float)
#: keys a resumed run cannot change: the saved weights, optimizer state or tables would not fit them
RESUME_FIXED = ("state_layers", "head_layers", "history_lstm", "action_features", "value_head", "optimizer",
                "hand_prediction")
#: keys before ``rules`` (read from older config files and checkpoints into ``rules``)
LEGACY_RULE_KEYS = ("bidding", "doubling")


def _with_fields(rules: str, fields: dict[str, bool]) -> str:
    from ddz_env.rules import Rules

    try:
        return Rules.of({**Rules.of(rules).to_dict(), **fields}).name
    except (TypeError, ValueError) as e:
        raise ValueError(f"config key 'rules': {e}") from None


class _TrainSchema(ConfigSchema):
    def translate(self, data: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
        """Configs and checkpoints written before the ``rules`` key: ``bidding`` / ``doubling`` folded into it."""
        legacy = {k: data.pop(k) for k in LEGACY_RULE_KEYS if k in data}
        for k, value in legacy.items():
            if not isinstance(value, bool):
                raise ValueError(f"config key {k!r}: expected true/false, got {value!r}")
        if legacy:
            data["rules"] = _with_fields(self.coerce("rules", data.get("rules", defaults["rules"]), False), legacy)
        return data

    def check_set(self, key: str, value: Any) -> None:
        if key in LEGACY_RULE_KEYS:
            raise ValueError(f"config key {key!r} is now part of 'rules': --set rules={key}={str(value).lower()} "
                             f"(or rules=douzero)")


SCHEMA = _TrainSchema(TrainConfig, resume_fixed=RESUME_FIXED)
#: the shipped configs (``--config default`` reads ``CONFIG_DIR / "default.yaml"``): the top-level
#: ``configs/`` of a clone, the ``agents.configs`` package data of a wheel
CONFIG_DIR = shipped_config_dir()


def available_configs() -> list[str]:
    """The names of the shipped configs, sorted (``--config NAME``)."""
    return SCHEMA.available()


def config_path(spec: str | Path) -> Path:
    """The YAML file of ``spec``: a shipped config's name (``"default"``) or a file path (errors list the names)."""
    return SCHEMA.path(spec)


def config_help() -> str:
    """Every config key with its default and its meaning, grouped (``train.py --help``)."""
    return SCHEMA.help()


def config_from_dict(data: dict[str, Any] | None, overrides: list[str] | dict[str, Any] | None = None) -> TrainConfig:
    """A validated config: the defaults, then ``data``'s keys, then ``overrides`` (``["key=value", ...]`` or a dict)."""
    return SCHEMA.from_dict(data, overrides)


def load_config(path: str | Path | None, overrides: list[str] | dict[str, Any] | None = None) -> TrainConfig:
    """The config of a shipped name (``"default"``) or a YAML file (None: the defaults), with ``overrides``."""
    return SCHEMA.load(path, overrides)


def resume_config(saved: dict[str, Any], overrides: list[str] | dict[str, Any] | None,
                  has_tables: bool = False, where: str = "the checkpoint's stored config") -> TrainConfig:
    """The config of a resumed run: the saved one with ``overrides``, refusing by name the keys
    (``RESUME_FIXED``) the saved weights and optimizer state cannot take, ``num_envs`` /
    ``num_actors`` when the checkpoint holds the tables of an inline run (``has_tables``), and an agent
    spec with ``trust=...`` that the overrides do not replace (trust is typed, never read from a file;
    ``where`` names the file)."""
    return SCHEMA.resume(saved, overrides, ("num_envs", "num_actors") if has_tables else (), where)


def save_config(cfg: TrainConfig, path: str | Path) -> None:
    """Write ``config.yaml`` whole or not at all."""
    SCHEMA.save(cfg, path)


__all__ = ["did_you_mean", "TrainConfig", "RESOURCE_BOUNDS", "NET_NAMES", "POSITIONS", "RESUME_FIXED", "CONFIG_DIR", "SCHEMA",
           "available_configs", "config_path", "config_help", "config_from_dict", "load_config", "resume_config",
           "save_config"]
