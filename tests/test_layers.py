"""The import graph has no upward arrow: the rules core (ddz_env) never imports the agents, the
agents' core never imports the trainer, and the DMC agent reads checkpoints without the trainer."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imports(path: Path) -> set[str]:
    """Absolute module names imported anywhere in ``path`` (relative imports resolved)."""
    pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def test_ddz_env_never_imports_agents():
    for path in sorted((ROOT / "ddz_env").glob("*.py")):
        bad = sorted(m for m in imports(path) if m == "agents" or m.startswith("agents."))
        assert not bad, f"{path.name} imports {bad}: ddz_env is the lowest layer"


def test_agents_core_never_imports_the_trainer():
    for path in sorted((ROOT / "agents").glob("*.py")):
        bad = sorted(m for m in imports(path) if m.startswith("agents.dmc.trainer") or m.startswith("agents.cli"))
        assert not bad, f"agents/{path.name} imports {bad}"


def test_dmc_agent_and_export_read_checkpoints_without_the_trainer():
    for name in ("agent.py", "export.py", "model.py", "checkpoint.py"):
        bad = sorted(m for m in imports(ROOT / "agents" / "dmc" / name) if m.startswith("agents.dmc.trainer"))
        assert not bad, f"agents/dmc/{name} imports {bad}"


def test_the_checker_sees_relative_imports():
    """(the test above could pass by parsing nothing: check it resolves a known relative import)"""
    assert "agents.loader.load" in imports(ROOT / "agents" / "seat_env.py")
    assert "ddz_env.game.Game" in imports(ROOT / "ddz_env" / "record.py")


#: the rules core's stack, lowest first: a module imports only modules of lower levels (so no circle)
CORE_LEVELS = (("cards", "files"), ("moves", "scoring"), ("actions", "legal"), ("rules",), ("game", "observation"),
               ("record", "vector"), ("env",))


def test_the_rules_core_is_a_stack_without_upward_imports():
    level = {m: k for k, names in enumerate(CORE_LEVELS) for m in names}
    files = {p.stem for p in (ROOT / "ddz_env").glob("*.py")} - {"__init__"}
    assert files == set(level), f"a ddz_env module without a level: {sorted(files ^ set(level))}"
    for name, k in level.items():
        deps = {m.split(".")[1] for m in imports(ROOT / "ddz_env" / f"{name}.py") if m.startswith("ddz_env.")}
        deps = {d for d in deps if d in level}
        bad = sorted(d for d in deps if level[d] >= k)
        assert not bad, f"ddz_env/{name}.py (level {k}) imports {bad}, of its own level or above"
