"""The integrations use RLlib (Ray) through its public API only (issue 63, item 2): no underscore name of a Ray
object is read, called, imported or overridden, so a Ray release that renames its private parts cannot break them
without a word. The scan reads the source with ``ast``; it needs no Ray (the main suite runs it). What it refuses,
in every module under ``agents/integrations/`` and ``agents/ppo/`` that imports ``ray``:

* an import of a ray module path with a component that starts with ``_``, or of an ``_name`` from a ray module;
* ``X._name`` (not a dunder) for any ``X`` other than ``self``, ``cls`` or ``super()``: another object's private
  part, a Ray object's or ours (ours are made public where another object reads them);
* in a class derived from a Ray class (directly, or through a class of the same module): ``self._name``,
  ``cls._name``, ``super()._name`` and ``def _name`` unless the class's own module assigns or defines ``_name``
  in a class of its own, or ``_name`` is one of RLlib's documented override points (:data:`HOOKS`), i.e. an
  underscore name inherited from Ray is neither read nor called.

An own private name in a Ray subclass may still collide with a private name of its Ray base (an override by
accident); ``test_rllib_tables.py::test_our_private_names_in_ray_subclasses_are_not_ray_names`` checks that
against the installed Ray (rllib venv)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("agents/integrations", "agents/ppo")

#: RLlib's documented override points whose names start with ``_``: ``RLModule``'s ``forward_train`` /
#: ``forward_exploration`` / ``forward_inference`` docstrings say "override ``self._forward()``" (or the
#: ``_forward_*`` of one phase); ``TorchDistribution``'s abstract ``_get_torch_distribution`` is what a subclass
#: implements. Defining them is the public way to extend those classes; reading a Ray attribute is not.
HOOKS = {"_forward", "_forward_train", "_forward_exploration", "_forward_inference", "_get_torch_distribution"}


def _private(name: str) -> bool:
    return len(name) > 1 and name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports_ray(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "ray" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ray":
            return True
    return False


def _ray_names(tree: ast.AST) -> set[str]:
    """The local names bound to something imported from ray."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ray":
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "ray"}
    return names


def _base_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def own_private_names(tree: ast.AST) -> set[str]:
    """The private names a module's own code binds: its functions and methods, ``self._x = ...`` anywhere, and its
    module-level ``_x``."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
            own.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and _private(sub.attr) and _is_own(sub.value):
                        own.add(sub.attr)
                    elif isinstance(sub, ast.Name) and _private(sub.id):
                        own.add(sub.id)
    return own


def offences(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: what`` for each use of a private Ray name in ``path`` (none when it does not import ray)."""
    tree = ast.parse(path.read_text(), str(path))
    if not _imports_ray(tree):
        return []
    rel = path.relative_to(root)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "ray" and any(_private(p) for p in a.name.split(".")):
                    out.append(f"{rel}:{node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ray":
            if any(_private(p) for p in node.module.split(".")):
                out.append(f"{rel}:{node.lineno}: from {node.module} import ...")
            out += [f"{rel}:{node.lineno}: from {node.module} import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _is_own(node.value):
            out.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    # (classes derived from ray: the private names they use must be their module's own or a documented hook)
    ray_names = _ray_names(tree)
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for c in classes:
            if c.name not in derived and any(_base_name(b) in ray_names | derived for b in c.bases):
                derived.add(c.name)
                changed = True
    own = own_private_names(tree)
    for c in classes:
        if c.name not in derived:
            continue
        for node in ast.walk(c):
            if isinstance(node, ast.Attribute) and _private(node.attr) and _is_own(node.value):
                if node.attr not in own and node.attr not in HOOKS:
                    out.append(f"{rel}:{node.lineno}: {ast.unparse(node)} (in {c.name}, a Ray subclass: Ray's)")
    return out


def scanned_files() -> list[Path]:
    return sorted(p for d in SCANNED if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py"))


def test_the_integrations_touch_no_private_name_of_ray():
    files = scanned_files()
    assert any(p.parts[-2:] == ("rllib", "tables.py") for p in files)
    found = [o for p in files for o in offences(p)]
    assert not found, "private names of Ray objects used (RLlib's public API only):\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_private_use(tmp_path):
    """The rule on a made-up module: each kind of use is found, with its line; self's own names, dunders and
    documented hooks are not."""
    src = '''
import ray._private.utils
from ray.rllib.env import _helpers
from ray.rllib.utils import _secret
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner


class Runner(MultiAgentEnvRunner):
    def __init__(self):
        self._mine = 1
        super().__init__()

    def _forward(self, batch):
        return self.__class__

    def sample(self):
        episode = self.make()
        episode._start_time = 0.0
        self._mine += self._needs_initial_reset
        return super()._sample(self._mine)


class Plain:
    def read(self, other):
        return self._anything
'''
    f = tmp_path / "mod.py"
    f.write_text(src)
    found = offences(f, tmp_path)
    assert sorted(int(o.split(":")[1]) for o in found) == [2, 3, 4, 18, 19, 20], found
    plain = tmp_path / "plain.py"  # (a module that does not import ray is not Ray's business)
    plain.write_text("def f(x):\n    return x._y\n")
    assert offences(plain, tmp_path) == []


@pytest.mark.rllib
def test_our_private_names_in_ray_subclasses_are_not_ray_names():
    """What the scan cannot see without Ray: a private name our code binds in a class derived from a Ray class
    (``self._x = ...``, ``def _x``) must not be a name of a Ray class in its MRO (that would be an override of, or
    a write to, Ray's private part, e.g. ``_needs_initial_reset`` or ``_increase_sampled_metrics``); RLlib's
    documented hooks (:data:`HOOKS`) excepted."""
    pytest.importorskip("ray.rllib")
    import importlib
    import inspect
    import re

    found = []
    for path in scanned_files():
        tree = ast.parse(path.read_text())
        if not _imports_ray(tree):
            continue
        names = own_private_names(tree) - HOOKS
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for cls in [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__]:
            bases = [b for b in cls.__mro__ if b.__module__.split(".")[0] == "ray"]
            for base in bases:
                try:
                    source = inspect.getsource(base)
                except (OSError, TypeError):
                    source = ""
                for name in names:
                    if name in vars(base) or re.search(rf"\b{re.escape(name)}\b", source):
                        found.append(f"{path.relative_to(ROOT)}: {cls.__name__}: {name} is {base.__module__}."
                                     f"{base.__qualname__}'s")
    assert not found, "our private names that are Ray's:\n" + "\n".join(sorted(set(found)))
