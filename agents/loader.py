"""``load("random" | "rule" | path | "douzero:DIR")``: an agent by name, from a checkpoint file or run
folder, or from a scheme spec.

Scheme specs name agents whose files are not ddz-env checkpoints:

* ``onnx:FILE.onnx``: a DMC agent or move-scoring policy exported by ``python -m agents.export``, playing
  through onnxruntime (the ``onnx`` extra), no torch; see `agents.onnx.agent`.
* ``ext:COMMAND`` and ``http:URL`` (or the URL itself, ``http://HOST:PORT/PATH``): an outside program that
  speaks the JSON seat protocol, one message a decision, on its standard input and output or over HTTP; options
  ``?timeout=SECONDS&text=no&...``; see `agents.external.agent`.
* ``douzero:DIR``: DouZero's three networks (``DIR`` holds ``landlord.ckpt``, ``landlord_up.ckpt``,
  ``landlord_down.ckpt``, DouZero's released baselines or a DouZero run folder); see
  `agents.douzero.agent`. DouZero has no bidding or doubling: a *bidder* makes those
  decisions, ``rule`` unless the spec names another, ``douzero:DIR?bidder=SPEC`` (any agent spec:
  ``random``, ``pretrained``, a checkpoint). Needs torch, not the ``douzero`` package.

One reader takes every scheme spec apart (`parse_spec`: ``scheme:TARGET?key=value&...``) and hands its
factory the target and the options as typed (a `SchemeSpec`); the factory checks which options it takes
and their values, with its own errors.

A checkpoint is a file ``torch.save`` wrote, holding a dict with at least
``"agent"``: the registered name of the agent kind that reads it. Other keys belong
to that kind (for a learned agent, typically ``"config"`` and ``"state_dict"``).
Loading uses ``torch.load(weights_only=True)``: plain tensors and containers only,
never arbitrary pickled code.

Agent kinds register a factory ``factory(checkpoint: dict) -> Agent``; the built-in
names call it with ``{"agent": name, "config": kwargs}``. A kind defined elsewhere plugs
in with ``register(name, factory)``, or lazily with ``register_lazy(name,
"module:attribute")``: the module is imported the first time a checkpoint (or, with
``named=True``, a spec) names the kind, so ``evaluate.py --a run/checkpoint.pt`` works without
importing it first. The built-in kinds (``random``, ``rule``, ``pretrained``, ``dmc``) are
registered that way too: this module sits below every agent kind and imports none of them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ._entry import install_extra
from .base import Agent

Factory = Callable[[dict], Agent]
_REGISTRY: dict[str, Factory] = {}
_LAZY: dict[str, str] = {}  # name -> "module:attribute" of its factory, imported on first use
_NAMED: set[str] = set()  # lazy kinds that a spec may name (``load("rule")``), not only a checkpoint


def register(name: str, factory: Factory, *, overwrite: bool = False) -> None:
    """Make ``load(name)`` and checkpoints whose ``"agent"`` is ``name`` build agents with ``factory``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"an agent name is a non-empty string, got {name!r}")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"agent {name!r} is already registered (pass overwrite=True to replace it)")
    _REGISTRY[name] = factory


def register_lazy(name: str, target: str, *, named: bool = False) -> None:
    """Register ``name`` on first use: ``target`` is ``"package.module:Class.factory"``. ``named``: a spec
    may name it (``load(name)``, listed by `registered`); else only checkpoints do."""
    if ":" not in target:
        raise ValueError(f"a lazy target is 'module:attribute', got {target!r}")
    _LAZY[name] = target
    if named:
        _NAMED.add(name)


def _resolve_lazy(name: str) -> None:
    import importlib

    module, _, attr = _LAZY[name].partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] == "torch":
            raise ImportError(f"agent {name!r} needs torch, part of {TORCH_HINT} ({e})") from None
        raise ValueError(f"checkpoint for agent {name!r}, whose code ({_LAZY[name]}) cannot be loaded: "
                         f"{type(e).__name__}: {e}") from None
    except (ImportError, AttributeError) as e:
        raise ValueError(f"checkpoint for agent {name!r}, whose code ({_LAZY[name]}) cannot be loaded: "
                         f"{type(e).__name__}: {e}") from None
    if name not in _REGISTRY:  # importing the module may have registered it already
        register(name, obj)


class SchemeSpec(NamedTuple):
    """A scheme spec ``scheme:TARGET?key=value&key2=value2`` taken apart by `parse_spec`, as its factory
    gets it: the factory checks the target and the options (which it takes, their values) itself."""

    text: str  #: the spec as given (``"search:pretrained?samples=8"``)
    scheme: str  #: ``"search"``
    target: str  #: what the scheme loads: ``BASE`` of ``search:BASE``, ``DIR``, ``FILE`` (``"pretrained"``)
    query: str | None  #: the options as typed, after the ``?`` (``"samples=8"``); None without a ``?``
    options: tuple[tuple[str, str | None], ...]  #: ``(key, value)`` in the order typed; value None without ``=``


@dataclass(frozen=True)
class Scheme:
    """How a scheme's spec is read (`parse_spec`) and the factory that gets it."""

    factory: str  #: ``"module:attribute"`` of ``factory(spec: SchemeSpec, **kwargs) -> Agent``, imported on first use
    options: bool = True  #: False: none; the target is all after ``scheme:`` (a file's path may hold a ``?``)
    target_is_spec: bool = False  #: the target is an agent spec, which may hold a ``?``: options follow the last ``?``
    value_is_spec: bool = False  #: one option whose value is an agent spec: it runs to the end (no ``&`` split)


#: scheme specs (``"scheme:REST"``) -> how each is read and its factory
_SCHEMES: dict[str, Scheme] = {"douzero": Scheme("agents.douzero.agent:from_spec", value_is_spec=True),  # ?bidder=SPEC
                               "sb3": Scheme("agents.integrations.sb3.policy:from_spec", options=False),
                               "rllib": Scheme("agents.integrations.rllib.files:from_spec"),  # ?trust=yes
                               "search": Scheme("agents.search.agent:from_spec", target_is_spec=True),
                               "onnx": Scheme("agents.onnx.agent:from_spec", options=False),
                               # outside programs: ?timeout=S&startup=S&text=no&stderr=PATH (agents/external)
                               "ext": Scheme("agents.external.agent:from_spec"),
                               "http": Scheme("agents.external.agent:from_spec"),
                               "https": Scheme("agents.external.agent:from_spec")}


#: the scheme specs in words, for an unknown agent's error (one per entry of `_SCHEMES`)
SCHEME_FORMS = ("search:BASE (rollouts of agent BASE), sb3:MODEL.zip (an SB3 model), rllib:RUN (an RLlib run "
                "folder or checkpoint), douzero:DIR (DouZero's networks), onnx:FILE.onnx (an agent exported by "
                "python -m agents.export), ext:COMMAND (an outside program speaking the JSON seat protocol on standard input "
                "and output), http:URL or https:URL (the same protocol, a POST a decision)")

#: every kind of agent spec `load` takes, in words: the one list of the programs' help (evaluate.py's --a and
#: --b, ddz-play's --vs, ddz-web's --agent), so that each names the same kinds (a scheme added to `_SCHEMES`
#: and `SCHEME_FORMS` is listed by all of them)
SPEC_KINDS = ("a name (random, rule, pretrained), a run folder, a checkpoint or policy .pt file, or a scheme spec: "
              f"{SCHEME_FORMS}; douzero:DIR?bidder=SPEC names the agent that bids and doubles for DouZero's "
              "networks (default rule)")


def _scheme(spec: Any) -> str | None:
    """The scheme of a scheme spec (``"douzero"`` of ``"douzero:DIR"``), else None."""
    if not isinstance(spec, str):
        return None
    head, sep, _ = spec.partition(":")
    return head if sep and head in _SCHEMES else None


def parse_spec(text: str) -> SchemeSpec:
    """The one reader of scheme specs: ``"scheme:TARGET?key=value&key2=value2"`` -> `SchemeSpec`.

    The options follow the first ``?`` after ``scheme:``; the last one where the target is itself an agent
    spec (``search:douzero:DIR?bidder=rule?samples=8``: the base ``douzero:DIR?bidder=rule``). They are
    ``key=value`` pairs joined by ``&``, except a scheme's one option whose value is an agent spec, which runs to
    the end (``douzero:DIR?bidder=search:rule?samples=2&candidates=2``). A scheme without options (``sb3:``,
    ``onnx:``: file paths) takes all after ``scheme:`` as its target. Which options a scheme takes, and their
    values, its factory checks. ``ValueError`` for a text that is no scheme spec."""
    scheme = _scheme(text)
    if scheme is None:
        raise ValueError(f"{text!r} is no scheme spec (one of {SCHEME_FORMS})")
    how = _SCHEMES[scheme]
    body = text[len(scheme) + 1:]
    if not how.options or "?" not in body:
        return SchemeSpec(text, scheme, body, None, ())
    target, _, query = body.rpartition("?") if how.target_is_spec else body.partition("?")
    options = []
    for part in [query] if how.value_is_spec else query.split("&"):
        key, eq, value = part.partition("=")
        options.append((key, value if eq else None))
    return SchemeSpec(text, scheme, target, query, tuple(options))


def _load_scheme(scheme: str, spec: str, kwargs: dict) -> Agent:
    import importlib

    module, _, attr = _SCHEMES[scheme].factory.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except ImportError as e:  # torch missing: say how to get it
        raise ImportError(f"agent spec {spec!r} needs torch, part of {TORCH_HINT} ({e})") from None
    return factory(parse_spec(spec), **kwargs)


def _kinds_only() -> set[str]:
    """The lazy kinds that only a checkpoint names (``dmc``, ``movescore``): never a spec's name, even once
    a checkpoint has loaded them (``load("movescore")`` has no weights to read)."""
    return set(_LAZY) - _NAMED


def registered() -> list[str]:
    """The agent names a spec may give, sorted (not the kinds only a checkpoint names)."""
    return sorted((set(_REGISTRY) - _kinds_only()) | _NAMED)


#: limits of what a config may hold (a file, a ``--set`` value, a checkpoint's stored config): YAML aliases
#: (and shared references in a pickled dict) expand without bound when read -- "a billion laughs" of a few
#: hundred bytes hung train.py and evaluate.py; these bound the bytes, the values counted with every alias
#: expanded, and the nesting. A real config is a few KB, about 100 values, 2 levels deep.
MAX_CONFIG_BYTES = 1 << 20
MAX_CONFIG_VALUES = 100_000
MAX_CONFIG_DEPTH = 32


def expanded_size_check(children, root: Any, what: str) -> None:
    """Raise ``ValueError`` if ``root`` (a YAML node or a plain object), with every shared reference expanded,
    holds more than `MAX_CONFIG_VALUES` values or nests deeper than `MAX_CONFIG_DEPTH` (or
    contains itself). Sizes are memoized per object, so the check is linear in the *stored* size."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()
    stack = [(root, False)]
    while stack:
        obj, done = stack.pop()
        k = id(obj)
        kids = children(obj)
        if done:
            open_.discard(k)
            size[k] = 1 + sum(size.get(id(c), 1) for c in kids)
            depth[k] = 1 + max((depth.get(id(c), 0) for c in kids), default=0)
            if size[k] > MAX_CONFIG_VALUES:
                raise ValueError(f"{what} expands to more than {MAX_CONFIG_VALUES:,} values (YAML aliases or shared "
                                 f"references): refused")
            if depth[k] > MAX_CONFIG_DEPTH:
                raise ValueError(f"{what} nests deeper than {MAX_CONFIG_DEPTH} levels: refused")
            continue
        if k in size:
            continue
        if k in open_:
            raise ValueError(f"{what} contains itself (a recursive alias or reference): refused")
        if kids:
            open_.add(k)
            stack.append((obj, True))
            stack.extend((c, False) for c in kids if id(c) not in size)
        else:
            size[k], depth[k] = 1, 1


def _plain_children(obj) -> list:
    if isinstance(obj, dict):
        return [x for kv in obj.items() for x in kv]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    return []


def check_plain(obj: Any, what: str = "config") -> Any:
    """``obj`` if it is within the config limits (values with shared references expanded, nesting);
    ``ValueError`` naming ``what`` otherwise. For dicts read from checkpoints (pickle keeps shared
    references shared: a 1.6 KB file can hold a list of 10^9 elements)."""
    expanded_size_check(_plain_children, obj, what)
    return obj


def check_tensor_bytes(obj: Any, what: str, limit: int | None = None) -> int:
    """The bytes the tensors in ``obj`` (a loaded file: dicts, lists and tuples of tensors) take once
    materialized, ``numel * element_size`` each; ``ValueError`` naming ``what``, the figure and the largest
    tensor if more than ``limit`` (default `ddz_env.files.max_load_bytes`, the bound on an agent file).

    The file bound alone does not bound memory: ``torch.save`` of ``torch.zeros(1).expand(2048, 2048)`` keeps
    its one-element storage, so a few-KB file holds tensors of any shape; they passed every shape check and
    took the full shapes' memory when a network was built from them (or a check such as ``isfinite`` ran).
    Containers are walked once each (memoized: shared references cost nothing); every reference to a tensor
    counts, as loading each copies it."""
    import torch

    from ddz_env.files import max_load_bytes

    limit = max_load_bytes() if limit is None else limit
    total, largest, seen = 0, (0, "", None), set()
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        node, name = stack.pop()
        if torch.is_tensor(node):
            size = node.numel() * node.element_size()
            total += size
            if size > largest[0]:
                largest = (size, name, node)
            continue
        if not isinstance(node, (dict, list, tuple)) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            stack.extend((v, f"{name}.{k}" if name else str(k)) for k, v in node.items())
        else:
            stack.extend((v, f"{name}[{i}]") for i, v in enumerate(node))
    if total > limit:
        size, name, t = largest
        raise ValueError(f"{what}: its tensors would take {total:,} bytes in memory, more than the {limit:,} an agent "
                         f"file may be ({name} alone: shape {tuple(t.shape)}, {t.numel():,} elements, {size:,} bytes; "
                         f"set DDZ_MAX_LOAD_BYTES to allow more)")
    return total


def config_of(checkpoint: dict) -> dict:
    """A checkpoint's ``"config"`` (the keyword arguments of its kind's constructor), ``{}`` if none;
    ``ValueError`` if it is no dict or beyond the config limits (`check_plain`)."""
    cfg = checkpoint.get("config", {}) or {}
    if not isinstance(cfg, dict):
        raise ValueError(f"checkpoint 'config' must be a dict, got {type(cfg).__name__}")
    return check_plain(cfg, "checkpoint 'config'")


#: the DMC checkpoint shipped with the package (``agents.load("pretrained")``); its provenance
#: (config, frames, machine, commit, evaluation results and commands) is the ``.json`` beside it
PRETRAINED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained", "dmc.pt")


#: how to get torch, in the errors of the calls that need it
TORCH_HINT = (f"the 'train' extra: {install_extra('train')} (a CPU-only torch first: pip install torch "
              "--index-url https://download.pytorch.org/whl/cpu)")


def _torch():
    """torch, or an ``ImportError`` that says how to install it (only checkpoints need it)."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"checkpoints and learned agents need torch, part of {TORCH_HINT} ({e})") from None
    return torch


def pretrained_path() -> str:
    """The shipped checkpoint's path; ``FileNotFoundError`` if this install lacks it."""
    if not os.path.isfile(PRETRAINED):
        raise FileNotFoundError(f"the pretrained checkpoint is not installed (expected {PRETRAINED})")
    _torch()
    return PRETRAINED


register_lazy("random", "agents.baselines.random_agent:from_checkpoint", named=True)
register_lazy("rule", "agents.baselines.rule_agent:from_checkpoint", named=True)
register_lazy("pretrained", "agents.dmc.agent:pretrained", named=True)  # the shipped DMC checkpoint (needs torch)
register_lazy("dmc", "agents.dmc.agent:DMCAgent.from_checkpoint")  # the trained DMC agent (needs torch)
# a move-scoring policy trained by any RL library (agents.integrations.move_policy.save_policy writes it)
register_lazy("movescore", "agents.integrations.move_policy:MoveScoringAgent.from_checkpoint")


#: the checkpoint of a run folder (``load("runs/demo")`` reads ``runs/demo/checkpoint.pt``)
RUN_CHECKPOINT = "checkpoint.pt"
#: what ``load(RUN)`` looks for in a run folder, in order: DMC's checkpoint, a library learner's policy
#: (``agents.runs.library``: the ``"movescore"`` export)
RUN_FILES = (RUN_CHECKPOINT, "policy.pt")


def load(spec: str | os.PathLike, **kwargs: Any) -> Agent:
    """An agent from a registered name (``kwargs`` go to its constructor), a checkpoint path,
    a run folder (the folder holding ``checkpoint.pt``, as ``train.py --resume`` takes it), or a
    scheme spec: ``douzero:DIR`` / ``douzero:DIR?bidder=SPEC`` (DouZero's networks, a bidder agent
    for the bid and double decisions DouZero never learned; default ``rule``), ``onnx:FILE.onnx`` (an
    exported graph; a path ending in ``.onnx`` is read as one too).

    Raises ``ValueError`` for a bare word that is no registered name (``"rul"``),
    ``FileNotFoundError`` for a path with no file there, and ``ValueError`` for a file that
    is corrupt or not a ddz-env checkpoint.
    """
    if isinstance(spec, str) and spec in _NAMED and spec not in _REGISTRY:
        _resolve_lazy(spec)
    if isinstance(spec, str) and spec in _REGISTRY and spec not in _kinds_only():
        return _REGISTRY[spec]({"agent": spec, "config": kwargs})
    scheme = _scheme(spec)
    if scheme is not None:
        return _load_scheme(scheme, spec, kwargs)
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"an agent spec is a name or a checkpoint path, got {type(spec).__name__}: {spec!r}")
    path = os.fspath(spec)
    if os.path.isdir(path):  # a run folder (as train.py --resume takes it): its checkpoint.pt or policy.pt
        inner = [os.path.join(path, f) for f in RUN_FILES if os.path.isfile(os.path.join(path, f))]
        if not inner:
            raise FileNotFoundError(f"checkpoint {path!r} is a directory without {' or '.join(RUN_FILES)} (a run "
                                    f"folder holds one; else give a checkpoint file)")
        path = inner[0]
    if path.endswith(".onnx"):  # an exported graph (python -m agents.export): as onnx:PATH
        return _load_scheme("onnx", f"onnx:{path}", kwargs)
    if not os.path.lexists(path):
        if _looks_like_name(path):
            import difflib

            close = difflib.get_close_matches(path, registered(), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown agent {path!r}{hint}: the registered agents are {', '.join(registered())}; "
                             f"anything else must be the path of an existing checkpoint file or run folder, "
                             f"or one of {SCHEME_FORMS}")
        raise FileNotFoundError(f"checkpoint {path!r} not found (no such file; the registered agents are "
                                f"{', '.join(registered())})")
    checkpoint = read_checkpoint(path)
    name = checkpoint["agent"]
    if name not in _REGISTRY and name in _LAZY:
        _resolve_lazy(name)
    if name not in _REGISTRY:
        raise ValueError(f"checkpoint {path!r} is for agent {name!r}, which is not registered "
                         f"(registered: {', '.join(registered())}); import the module that registers it")
    try:
        return _REGISTRY[name](checkpoint)
    except ValueError as e:  # the kind refused it (e.g. a DMC format it does not read): say which file
        raise ValueError(f"checkpoint {path!r} (agent {name!r}) cannot be loaded: {e}") from None
    except (TypeError, KeyError, AttributeError) as e:  # a foreign or damaged dict: say which file and kind
        raise ValueError(f"checkpoint {path!r} (agent {name!r}) cannot be loaded: {type(e).__name__}: {e}") from None


def _looks_like_name(text: str) -> bool:
    """A bare word (no folder, no extension): meant as an agent name rather than a file."""
    seps = {os.sep, os.altsep} - {None}
    return not any(c in text for c in seps) and "." not in text


def read_checkpoint(path: str | os.PathLike) -> dict:
    """The checkpoint dict of a file; ``ValueError`` if it is corrupt or not a ddz-env checkpoint
    (``ImportError`` without torch)."""
    from ddz_env.files import input_file

    torch = _torch()
    path = input_file(path, "checkpoint")  # a regular file of bounded size: no FIFO, device or 10 GB file
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (UnpicklingError, RuntimeError, EOFError...)
        raise ValueError(f"{os.fspath(path)!r} is corrupt or not a ddz-env checkpoint: torch.load failed "
                         f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("agent"), str):
        got = f"a dict with keys {sorted(map(str, checkpoint))}" if isinstance(checkpoint, dict) \
            else type(checkpoint).__name__
        raise ValueError(f"{os.fspath(path)!r} is corrupt or not a ddz-env checkpoint: expected a dict with "
                         f"an 'agent' name, got {got}")
    check_tensor_bytes(checkpoint, f"checkpoint {os.fspath(path)!r}")  # (stride-0 views: a small file, any shape)
    return checkpoint


def save_checkpoint(path: str | os.PathLike, agent: str, **content: Any) -> None:
    """Write a checkpoint ``{"agent": agent, **content}`` that `load` reads back; whole or not at
    all (a temporary file, then ``os.replace``), an ``OSError`` if it cannot be written."""
    from ddz_env.files import write_binary

    torch = _torch()
    write_binary(path, lambda f: torch.save({"agent": agent, **content}, f))


__all__ = ["SchemeSpec", "parse_spec", "check_plain", "check_tensor_bytes", "expanded_size_check", "MAX_CONFIG_BYTES", "MAX_CONFIG_VALUES", "MAX_CONFIG_DEPTH",
           "load", "register", "register_lazy", "registered", "read_checkpoint", "save_checkpoint", "config_of", "PRETRAINED",
           "pretrained_path"]
