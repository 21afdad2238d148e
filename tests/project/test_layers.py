"""The import graph has no upward arrow and no circle: the rules core (ddz_env) is a stack and never
imports the agents; the agents are laid out by role, each role importing only those below it; the
DMC agent reads checkpoints without the trainer."""
from pathlib import Path

from common import ROOT, imports


def test_ddz_env_never_imports_agents():
    for path in sorted((ROOT / "ddz_env").glob("*.py")):
        bad = sorted(m for m in imports(path) if m == "agents" or m.startswith("agents."))
        assert not bad, f"{path.name} imports {bad}: ddz_env is the lowest layer"


#: the agents' layers, lowest first: a module imports only modules of its own level or below (and the
#: graph has no circle: test_no_module_imports_itself_through_a_circle). A name matches a module and
#: everything under it; the longest match wins (agents.dmc.agent is level 3, agents.dmc.learner.trainer 5).
AGENT_LEVELS = (
    ("agents._exports", "agents._entry", "agents.base"),                    # the agent interface; the programs' guard
    ("agents.loader",),                                                     # an agent from a spec
    ("agents.runs", "agents.baselines", "agents.douzero.encoding", "agents.douzero.model", "agents.external"),
    ("agents.dmc", "agents.douzero", "agents.search"),                      # the learned and searching agents
    ("agents.evaluation", "agents.integrations", "agents.onnx", "agents.ppo"),  # agents play agents; ONNX; our PPO
    ("agents.dmc.learner", "agents.runs.library"),                          # the learners' runs (they evaluate as they train)
    ("agents.play",),                                                       # people at the table
    ("agents.cli", "agents.export"),                                        # the programs
    ("agents",),                                                            # the package's exports
)
#: package __init__ files that re-export names on first use only (agents._exports): what a lazy
#: package lists is not an import of the package's level
_LEVEL_OF = {name: k for k, names in enumerate(AGENT_LEVELS) for name in names}


def agent_level(module: str) -> int:
    """The level of an ``agents`` module: its longest prefix in AGENT_LEVELS."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in _LEVEL_OF:
            return _LEVEL_OF[".".join(parts[:n])]
    raise KeyError(module)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(pkg: str) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(name: str, known: set[str]) -> str | None:
    """The module of an imported name (``agents.loader.load`` -> ``agents.loader``), if it is one of ``known``."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def test_every_agents_module_has_a_level_and_imports_nothing_above_it():
    mods = _modules("agents")
    for name in mods:
        agent_level(name)  # (a KeyError names a module without a level)
    for name, path in mods.items():
        k = agent_level(name)
        deps = {_resolve(m, set(mods)) for m in imports(path)} - {None, name}
        bad = sorted(d for d in deps if agent_level(d) > k)
        assert not bad, f"{path.relative_to(ROOT)} (level {k}) imports {bad}, of a higher level"


def import_graph(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """ddz_env's and agents' import graph, module -> the modules it imports (a package's own ``__init__``
    is not an edge: Python imports it first anyway); ``sources``: module -> text read instead of its file."""
    mods = {**_modules("ddz_env"), **_modules("agents")}
    graph = {}
    for name, path in mods.items():
        deps = {_resolve(m, set(mods)) for m in imports(path, (sources or {}).get(name))} - {None, name}
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[str]:
    """The import circles a depth-first walk over ``graph`` finds (``a -> b -> a``): none for a stack."""
    state: dict[str, int] = {}
    found = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for d in sorted(graph[node]):
            if state.get(d) == 1:
                found.append(" -> ".join(stack[stack.index(d):] + [node, d] if d in stack else [node, d]))
            elif d not in state:
                visit(d, stack + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_module_imports_itself_through_a_circle():
    """A depth-first walk over ddz_env's and agents' import graph finds no cycle, through import
    statements or imports by a literal name (``importlib.import_module("ddz_env.readers")``)."""
    assert circles(import_graph()) == []


def test_the_layer_check_sees_an_upward_import_and_a_circle():
    """(the tests above could pass by reading nothing: they must see the imports they rule on)"""
    assert agent_level("agents.dmc.agent") < agent_level("agents.evaluation.arena") < agent_level("agents.dmc.learner.trainer")
    assert "agents.dmc.model.make_model" in imports(ROOT / "agents" / "dmc" / "learner" / "sources.py")
    assert "agents.loader.config_of" in imports(ROOT / "agents" / "baselines" / "rule_agent.py")
    # an import by a literal name is an import: the plane readers served from observation by name (as they
    # were before issue 46) close a circle, and import upward
    shim = 'def __getattr__(name):\n    import importlib\n    return getattr(importlib.import_module("ddz_env.readers"), name)\n'
    observation = ROOT / "ddz_env" / "observation.py"
    assert "ddz_env.readers" in imports(observation, observation.read_text() + shim)
    assert circles(import_graph({"ddz_env.observation": observation.read_text() + shim})) == [
        "ddz_env.observation -> ddz_env.readers -> ddz_env.observation"]
    probe = ROOT / "agents" / "dmc" / "__init__.py"
    for call, name in (('__import__("agents.cli.train")', "agents.cli.train"),
                       ('importlib.import_module(".learner.trainer", __name__)', "agents.dmc.learner.trainer"),
                       ('importlib.import_module("..cli", package="agents.dmc")', "agents.cli"),
                       ('import_module(".model", __package__)', "agents.dmc.model")):
        assert name in imports(probe, f"import importlib\n{call}\n"), call
    assert imports(probe, "import importlib\nimportlib.import_module(NAME)\n") == {"importlib"}  # (not literal)


def test_agents_below_the_programs_never_import_the_trainer_or_the_programs():
    for path in sorted((ROOT / "agents").rglob("*.py")):
        name = module_name(path)
        if name.startswith(("agents.cli", "agents.dmc.learner")) or name == "agents":
            continue
        bad = sorted(m for m in imports(path) if m.startswith(("agents.dmc.learner.trainer", "agents.cli")))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


#: the rules core's stack, lowest first: a module imports only modules of lower levels (so no circle)
CORE_LEVELS = (("cards", "files"), ("moves", "scoring"), ("actions", "legal"), ("rules",), ("observation",), ("readers",),
               ("game", "batch", "info"), ("transitions",),
               ("record", "vector", "beliefs", "classic", "endgame"), ("view",), ("render",), ("env",))


def test_the_rules_core_is_a_stack_without_upward_imports():
    level = {m: k for k, names in enumerate(CORE_LEVELS) for m in names}
    files = {p.stem for p in (ROOT / "ddz_env").glob("*.py")} - {"__init__"}
    assert files == set(level), f"a ddz_env module without a level: {sorted(files ^ set(level))}"
    for name, k in level.items():
        deps = {m.split(".")[1] for m in imports(ROOT / "ddz_env" / f"{name}.py") if m.startswith("ddz_env.")}
        deps = {d for d in deps if d in level}
        bad = sorted(d for d in deps if level[d] >= k)
        assert not bad, f"ddz_env/{name}.py (level {k}) imports {bad}, of its own level or above"


#: the old module paths agents.MOVED keeps: the modules of release 0.1.0 (``git show d2e724f:agents``, the
#: commit that wrote CHANGELOG's 0.1.0 section) that moved; a module that came after it has no old path
RELEASED_PATHS = {"agents.random_agent", "agents.rule_agent", "agents.hand", "agents.view", "agents.calibrate",
                  "agents.arena", "agents.stats", "agents.match", "agents.web", "agents.web.server",
                  "agents.dmc.evaluator", "agents.dmc.experience", "agents.dmc.trainer"}


def test_old_module_paths_are_those_of_a_release_each_with_its_removal_in_the_changelog():
    """No shim without a release (issue 46): agents.MOVED holds the 0.1.0 paths only, and CHANGELOG.md
    names each with the release that removes it."""
    import re

    from agents import MOVED

    assert set(MOVED) == RELEASED_PATHS
    log = (ROOT / "CHANGELOG.md").read_text()
    entry = next(p for p in log.split("\n- ") if "agents.MOVED" in p and "removed in" in p)
    assert re.search(r"removed in \d+\.\d+\.\d+", entry), entry
    named = set(re.findall(r"`(agents\.[a-z_.]+)`", entry))
    assert RELEASED_PATHS <= named, sorted(RELEASED_PATHS - named)


def test_old_module_paths_still_import_the_moved_modules_and_say_where_they_went():
    """Every path of agents.MOVED imports the module at its new path (the same object) with a
    DeprecationWarning naming the new path; the two former modules that are packages now export
    their names. (In a fresh interpreter: this one has imported the new paths already.)"""
    import subprocess
    import sys

    code = """
import importlib, json, warnings
import agents
out = {}
OPTIONAL = {"fastapi", "uvicorn", "torch", "yaml", "tqdm", "matplotlib"}  # extras a module may need
for old, new in agents.MOVED.items():
    try:
        importlib.import_module(new)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in OPTIONAL:
            raise
        out[old] = "missing " + e.name  # (this install lacks the extra the new module needs)
        continue
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    out[old] = [mod is importlib.import_module(new), mod.__spec__.name, [str(x.message) for x in w
                if issubclass(x.category, DeprecationWarning)]]
from agents.evaluation import evaluate, run_records, MODES
from agents.play import main
from agents.rule_agent import RuleAgent
out["names"] = [evaluate.__module__, main.__module__, RuleAgent.__module__]
print(json.dumps(out))
"""
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    import json

    out = json.loads(p.stdout)
    names = out.pop("names")
    assert names == ["agents.evaluation.protocols", "agents.play.terminal", "agents.baselines.rule_agent"]
    from agents import MOVED

    assert set(out) == set(MOVED) == RELEASED_PATHS
    missing = {old: v for old, v in out.items() if isinstance(v, str)}
    assert len(missing) < len(MOVED) // 2, missing  # (only the modules of an absent extra are left out)
    for old, (same, spec_name, warned) in ((k, v) for k, v in out.items() if k not in missing):
        new = MOVED[old]
        assert same and spec_name == new, f"{old} is not the module at its new path ({spec_name})"
        assert warned and new in warned[0] and old in warned[0], (old, warned)


def test_old_module_paths_run_with_python_m():
    """Issue 38, case 5: ``python -m agents.web --help`` (README's command until the layout by role) and
    ``python -m agents.calibrate --help`` ran into ``'_MovedModules' object has no attribute 'get_code'``;
    they run the moved programs now, with a note naming the new path."""
    import subprocess
    import sys

    for old in ("agents.web", "agents.calibrate"):
        p = subprocess.run([sys.executable, "-m", old, "--help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0 and p.stdout.startswith("usage:"), (old, p.stderr[-500:])
        assert "Traceback" not in p.stderr


def test_the_former_play_module_keeps_its_public_names():
    """Issue 38, case 5: ``play_hand`` and ``spaced`` of the former ``agents.play`` module are still there."""
    import agents.play as play
    from agents.play.match import spaced
    from agents.play.terminal import play_hand

    assert play.play_hand is play_hand and play.spaced is spaced
    assert set(play.__all__) >= {"main", "render", "play_hand", "Match", "seat_view", "spaced"}


def test_no_module_imports_a_private_name_of_another_module():
    """A leading underscore means "this module's own": another module never imports it (``from m import
    _x``); what two modules share is public, documented where it lives."""
    import ast

    found = []
    for package in ("ddz_env", "agents"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    found += [f"{path.relative_to(ROOT)}: from {'.' * node.level}{node.module or ''} import {a.name}"
                              for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "\n".join(found)
