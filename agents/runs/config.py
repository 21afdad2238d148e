"""Configs from a dataclass, for any trainer: YAML files, ``--set key=value``, the ``--help`` text,
the shipped configs found by name, and the keys a resumed run may not change.

A trainer declares its settings as a dataclass whose fields are made with :func:`key` (a default and
a one-line meaning, optionally the start of a section) and that has a ``validate()`` method returning
the instance or raising ``ValueError`` naming the key. ``ConfigSchema(TheConfig, ...)`` then gives:

============================  ==================================================================
``schema.load(spec, sets)``   a shipped config's name (``"default"``) or a YAML file, then ``--set``
``schema.from_dict(d, sets)`` a dict (a checkpoint's saved config), then ``--set``
``schema.resume(saved, sets)``  the same, refusing by name the keys in ``resume_fixed``
``schema.save(cfg, path)``    ``config.yaml``, whole or not at all
``schema.help()``             every key with its default and meaning, grouped by section
``schema.path(spec)``         the YAML file of a name or path (errors list the shipped names)
============================  ==================================================================

Types come from the field annotations: ``int``, ``float``, ``bool``, ``str``, ``list[int]``,
``list[str]`` and ``dict`` (options passed on as they are; ``--set key.option=value`` sets one). ``--set`` values are parsed as YAML scalars. An unknown key, a value of the wrong
type or an out-of-range value raises ``ValueError`` naming the key (with a did-you-mean).

The shipped configs are the top-level ``configs/`` folder of a clone, or the ``agents.configs``
package data of an installed wheel (pyproject maps one to the other): :func:`shipped_config_dir`.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
import typing
from dataclasses import field
from pathlib import Path
from typing import Any

from .._entry import install_extra
from ..loader import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, MAX_CONFIG_VALUES, check_plain, expanded_size_check


def yaml_module():
    """PyYAML (the ``train`` extra), imported where a config is read or written: the keys and
    their help (``ddz-train --help``) need no third-party package."""
    try:
        import yaml
    except ImportError as e:
        raise ImportError(f"reading and writing configs needs PyYAML, part of the 'train' extra "
                          f"({install_extra('train')}): {e}") from None
    return yaml


def _node_children(node) -> list:
    value = getattr(node, "value", None)
    if isinstance(value, list):
        return [x for pair in value for x in (pair if isinstance(pair, tuple) else (pair,))]
    return []


def load_yaml(text: str, what: str = "config") -> Any:
    """``yaml.safe_load(text)`` within the config limits: at most :data:`MAX_CONFIG_BYTES`, and the document's
    node graph is measured with every alias expanded *before* it is built (building it is what hangs).
    ``ValueError`` naming ``what``; ``yaml.YAMLError`` for bad syntax."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(f"{what} is {len(text):,} characters, more than a config may be ({MAX_CONFIG_BYTES:,})")
    yaml = yaml_module()
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size_check(_node_children, node, what)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def key(default: Any, help: str, section: str | None = None) -> Any:
    """A config field: its default and its one-line meaning (``--help`` and the docs read it here)."""
    meta = {"help": help}
    if section:
        meta["section"] = section
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def did_you_mean(word: str, choices, what: str = "") -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to a mistyped ``word``, else ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shipped_config_dir() -> Path:
    """The folder of the shipped configs: ``configs/`` beside ``pyproject.toml`` in a clone, else the
    installed ``agents.configs`` package data (a wheel)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "configs").is_dir():
        return root / "configs"
    import importlib.util

    spec = importlib.util.find_spec("agents.configs")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return root / "configs"  # (neither: an install without them; config_path's errors say none is shipped)


def show(value: Any) -> str:
    """A value as it is written in YAML / ``--set``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


class ConfigSchema:
    """How the configs of one dataclass are read, checked, shown and written (see the module doc).

    ``shipped_dir``: where ``load("NAME")`` finds ``NAME.yaml`` (None: :func:`shipped_config_dir`,
    looked up at each call). ``resume_fixed``: keys a resumed run cannot change (the saved
    weights or optimizer state would not fit them). Subclasses may translate keys of older files
    in :meth:`translate` and refuse some ``--set`` keys with a hint in :meth:`check_set`.
    """

    def __init__(self, cls: type, shipped_dir: Path | None = None, resume_fixed: tuple[str, ...] = ()):
        self.cls = cls
        self.fields = {f.name: f for f in dataclasses.fields(cls)}
        self.hints = typing.get_type_hints(cls)
        self._dir = shipped_dir
        self.resume_fixed = tuple(resume_fixed)

    @property
    def shipped_dir(self) -> Path:
        return self._dir if self._dir is not None else shipped_config_dir()

    # ------------------------------------------------------------------ hooks
    def translate(self, data: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
        """``data`` (a file's or checkpoint's keys) with keys of older versions rewritten; default: as is."""
        return data

    def check_set(self, key: str, value: Any) -> None:
        """Raise ``ValueError`` for a ``--set`` key that needs a hint rather than "unknown key"; default: none."""

    # ------------------------------------------------------------------ values
    def unknown_key(self, key: str) -> ValueError:
        return ValueError(f"unknown config key {key!r}{did_you_mean(key, self.fields)}; known keys: "
                          f"{', '.join(self.fields)}")

    def is_mapping(self, key: str) -> bool:
        """Is field ``key`` a mapping of options (``dict``)?"""
        tp = self.hints[key]
        return tp is dict or typing.get_origin(tp) is dict

    def coerce(self, key: str, value: Any, from_text: bool) -> Any:
        """``value`` as the type of field ``key`` (strings from ``--set`` are parsed as YAML scalars)."""
        tp = self.hints[key]
        if from_text and isinstance(value, str) and tp is not str:
            yaml = yaml_module()
            try:
                value = load_yaml(value, f"config key {key!r}")
            except yaml.YAMLError:
                raise ValueError(f"config key {key!r}: cannot parse {value!r}") from None
        if tp in (int, float) and isinstance(value, str):  # YAML 1.1 reads "1e-3" and "1e6" as strings
            try:
                value = float(value)
            except ValueError:
                pass
        origin = typing.get_origin(tp)
        if self.is_mapping(key):  # options handed to a learner as they are (it checks them itself)
            if not isinstance(value, dict) or not all(isinstance(k, str) and k for k in value):
                raise ValueError(f"config key {key!r}: expected a mapping of option names to values, got {value!r}")
            return dict(check_plain(value, f"config key {key!r}"))
        if origin is list and typing.get_args(tp) == (str,):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                raise ValueError(f"config key {key!r}: expected a list of names, got {value!r}")
            return list(value)
        if origin is list:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
                raise ValueError(f"config key {key!r}: expected a list of integers, got {value!r}")
            return list(value)
        if tp is bool:
            if not isinstance(value, bool):
                raise ValueError(f"config key {key!r}: expected true/false, got {value!r}")
            return value
        if tp is int:
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # 1e6 in YAML
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"config key {key!r}: expected an integer, got {value!r}")
            return value
        if tp is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"config key {key!r}: expected a number, got {value!r}")
            return float(value)
        if tp is str:
            if not isinstance(value, str):
                raise ValueError(f"config key {key!r}: expected a string, got {value!r}")
            return value
        raise TypeError(f"unsupported field type {tp} for {key}")  # pragma: no cover

    def from_dict(self, data: dict[str, Any] | None, overrides: list[str] | dict[str, Any] | None = None):
        """A validated config: the defaults, then ``data``'s keys, then ``overrides``
        (``["key=value", ...]``, values parsed as YAML scalars, or a dict)."""
        values = dataclasses.asdict(self.cls())
        check_plain(data, "config")  # (a checkpoint's stored config: shared references, read before any use)
        if data is not None and not isinstance(data, dict):
            raise ValueError(f"a config is a mapping of keys to values, got {type(data).__name__}")
        for k, value in self.translate(dict(data or {}), values).items():
            if k not in self.fields:
                raise self.unknown_key(k)
            values[k] = self.coerce(k, value, from_text=False)
        if isinstance(overrides, dict):
            items = [(k, v, False) for k, v in overrides.items()]
        else:
            items = []
            for text in overrides or []:
                if "=" not in text:
                    raise ValueError(f"--set expects key=value, got {text!r}")
                k, v = text.split("=", 1)
                items.append((k.strip(), v.strip(), True))
        for k, value, from_text in items:
            self.check_set(k, value)
            head, dot, sub = k.partition(".")
            if dot and head in self.fields and self.is_mapping(head):  # --set hp.lr=1e-3: one option
                if not sub:
                    raise ValueError(f"--set {k}=...: name the option after the dot")
                parsed = load_yaml(value, f"config key {k!r}") if from_text and isinstance(value, str) else value
                values[head] = self.coerce(head, {**values[head], sub: parsed}, False)
                continue
            if k not in self.fields:
                raise self.unknown_key(k)
            values[k] = self.coerce(k, value, from_text)
        return self.cls(**values).validate()

    # ------------------------------------------------------------------ files
    def available(self) -> list[str]:
        """The names of the shipped configs, sorted (``--config NAME``)."""
        return sorted(p.stem for p in self.shipped_dir.glob("*.yaml"))

    def path(self, spec: str | Path) -> Path:
        """The YAML file of ``spec``: a shipped config's name (``"default"``) or a file path.

        ``ValueError`` for an unknown name or a directory, ``FileNotFoundError`` for a missing
        file; both list the shipped names."""
        names = self.available()
        shipped = f"the shipped configs are {', '.join(names)}" if names else "no config is shipped with this install"
        text = str(spec)
        if isinstance(spec, str) and _is_name(text):
            if text in names:
                return self.shipped_dir / f"{text}.yaml"
            if not Path(text).exists():
                raise ValueError(f"unknown config {text!r}{did_you_mean(text, names)}: {shipped} (or give the path of "
                                 f"a YAML file)")
        p = Path(spec)
        if p.is_dir():
            raise ValueError(f"config {text!r} is a directory, not a YAML file")
        if not p.is_file():
            raise FileNotFoundError(f"config file {text!r} not found ({shipped}: --config NAME)")
        return p

    def load(self, spec: str | Path | None, overrides: list[str] | dict[str, Any] | None = None):
        """The config of a shipped name or a YAML file (None: the defaults), with ``overrides`` applied.

        ``FileNotFoundError`` for a missing file, ``ValueError`` for an unknown name, a directory,
        a YAML syntax error, or a bad key or value (naming it)."""
        data: dict[str, Any] = {}
        if spec is not None:
            p = self.path(spec)
            yaml = yaml_module()
            try:
                if p.stat().st_size > MAX_CONFIG_BYTES:
                    raise ValueError(f"config {str(p)!r} is {p.stat().st_size:,} bytes, more than a config may be "
                                     f"({MAX_CONFIG_BYTES:,})")
                data = load_yaml(p.read_text(), f"config {str(p)!r}") or {}
            except yaml.YAMLError as e:
                raise ValueError(f"config {str(p)!r} is not valid YAML: {str(e).splitlines()[0]} "
                                 f"({getattr(e, 'problem_mark', '')})".replace(" ()", "")) from None
            except UnicodeDecodeError:
                raise ValueError(f"config {str(p)!r} is not a text file") from None
            if not isinstance(data, dict):
                raise ValueError(f"{spec}: a config file is a mapping of keys to values")
            check_plain(data, f"config {str(p)!r}")  # (bounded and plain first: the walk below is bounded)
            stored_trust(data, overrides, f"config {str(p)!r}")  # (a config file, too, may come from elsewhere)
        return self.from_dict(data, overrides)

    def resume(self, saved: dict[str, Any], overrides: list[str] | dict[str, Any] | None,
               fixed: tuple[str, ...] = (), where: str = "the run's stored config"):
        """The config of a resumed run: the saved one with ``overrides``, refusing by name the keys of
        ``resume_fixed`` and ``fixed`` (those the saved state cannot take), and a stored agent spec that
        grants trust (:func:`stored_trust`; ``where`` names the file it came from)."""
        base = self.from_dict(saved)  # (check_plain first: the walk below is bounded)
        stored_trust(saved, overrides, where)
        cfg = self.from_dict(saved, overrides)
        changed = [k for k in self.resume_fixed + tuple(fixed) if getattr(cfg, k) != getattr(base, k)]
        if changed:
            k = changed[0]
            raise ValueError(f"config key {k!r} cannot change on --resume (the run has {getattr(base, k)!r}, "
                             f"asked {getattr(cfg, k)!r}): start a new run instead")
        return cfg

    def save(self, cfg: Any, path: str | Path) -> None:
        """Write ``config.yaml`` whole or not at all (a resumed run rewrites it: a full disk must not truncate it)."""
        from ddz_env.files import write_text

        write_text(path, yaml_module().safe_dump(dataclasses.asdict(cfg), sort_keys=False))

    def help(self) -> str:
        """Every config key with its default and its meaning, grouped (``train.py --help``)."""
        fields = dataclasses.fields(self.cls)
        wk = max(len(f.name) for f in fields)
        defaults = dataclasses.asdict(self.cls())
        wd = max(len(show(defaults[f.name])) for f in fields)
        lines = ["config keys (set in the YAML file or with --set KEY=VALUE; the defaults below apply to keys a "
                 "config leaves out):"]
        for f in fields:
            if "section" in f.metadata:
                lines.append(f"  {f.metadata['section']}:")
            lines.append(f"    {f.name:<{wk}}  {show(defaults[f.name]):<{wd}}  {f.metadata['help']}")
        return "\n".join(lines)


#: ``?trust=...`` / ``&trust=...`` in an agent spec (``rllib:DIR?trust=yes`` unpickles what DIR holds), also
#: nested in another spec's option (``douzero:DIR?bidder=rllib:X?trust=yes``)
TRUST_OPTION = re.compile(r"[?&]\s*trust\s*=", re.IGNORECASE)


def _strings(value: Any, path: tuple) -> list[tuple[tuple, str]]:
    """Every string in ``value`` (keys and values, nested), each with the keys that lead to it."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _strings(k, path) + _strings(v, path + (k,))]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [x for v in value for x in _strings(v, path)]
    return []


def stored_trust(saved: Any, overrides: list[str] | dict[str, Any] | None, where: str) -> None:
    """``ValueError`` if a config read from a file (a config file given to ``--config``, a checkpoint's
    ``config``, a run folder's ``config.yaml``) holds an agent spec with ``trust=...`` that no ``--set`` of this
    command replaces. Trust comes from what the user types: ``train.py --config FILE`` or ``--resume RUN`` of a
    file received from elsewhere would otherwise unpickle whatever its ``eval_opponents`` name. ``saved`` has passed :func:`check_plain` (bounded walk)."""
    if not isinstance(saved, dict):
        return
    if isinstance(overrides, dict):
        typed = {str(k) for k in overrides}
    else:
        typed = {text.split("=", 1)[0].strip() for text in overrides or [] if isinstance(text, str)}
    for path, text in _strings(saved, ()):
        if not TRUST_OPTION.search(text):
            continue
        top = str(path[0]) if path else text  # (no path: a top-level key, which from_dict refuses first)
        if path and (top in typed or (len(path) > 1 and f"{top}.{path[1]}" in typed)):
            continue  # replaced by what the user typed now
        raise ValueError(f"{where}: config key {top!r} holds {text!r}; trust=... is taken only from the command "
                         f"line, never from a file (a config or run folder received from elsewhere could name any "
                         f"pickle): to use it, type the key on the command line (--set {top}=...)")


def _is_name(spec: str) -> bool:
    """A bare word (no folder, no extension): a shipped config's name rather than a file."""
    return not any(c in spec for c in "/\\") and not spec.lower().endswith((".yaml", ".yml"))


__all__ = ["ConfigSchema", "key", "stored_trust", "TRUST_OPTION", "did_you_mean", "shipped_config_dir", "yaml_module", "show", "load_yaml", "check_plain",
           "MAX_CONFIG_BYTES", "MAX_CONFIG_VALUES", "MAX_CONFIG_DEPTH"]
