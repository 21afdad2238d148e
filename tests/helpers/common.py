"""What the test modules share: the repository's paths (the tests live two levels below its root)."""
import ast
from pathlib import Path

#: the repository root (a clone)
ROOT = Path(__file__).resolve().parents[2]
#: the documentation a user reads: README.md and the pages of docs/ (the MkDocs site)
DOC_FILES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def docs_text() -> str:
    """README.md and every docs/ page, one after another (where a table or a block may live)."""
    return "\n".join(p.read_text() for p in DOC_FILES)


#: the shipped smoke config: the base of every short training run in the tests
SMOKE = ROOT / "configs" / "smoke.yaml"


def needs(module: str, extra: str):
    """A skip marker for a test that needs ``module`` (part of the ``extra`` extra) when it is missing."""
    import importlib

    import pytest

    try:
        importlib.import_module(module)
        missing = False
    except ImportError:
        missing = True
    return pytest.mark.skipif(missing, reason=f"needs {module} (pip install 'ddz-env[{extra}]')")


#: for tests of checkpoints and learned agents
needs_torch = needs("torch", "train")


def imports(path: Path, source: str | None = None) -> set[str]:
    """Absolute module names imported anywhere in ``path`` (relative imports resolved): import statements,
    and ``importlib.import_module("name")`` / ``__import__("name")`` calls with a literal name (an import
    by name is an import: a circle through one is a circle). ``source``: the text to read instead of the file's."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    pkg = module.rpartition(".")[0]
    if path.stem == "__init__":
        module = pkg
    out = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
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
        elif isinstance(node, ast.Call) and node.args:
            name = _import_call_name(node, module, pkg)
            if name:
                out.add(name)
    return out


def _import_call_name(node: ast.Call, module: str, pkg: str) -> str | None:
    """The module an ``importlib.import_module(...)`` / ``__import__(...)`` call imports, when its name is a
    literal (a relative one resolved against a literal package, ``__name__`` or ``__package__``)."""
    f = node.func
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    first = node.args[0]
    if called not in ("import_module", "__import__") or not (isinstance(first, ast.Constant)
                                                                and isinstance(first.value, str)):
        return None
    name = first.value
    if called == "__import__" or not name.startswith("."):
        return name
    anchor = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "package"), None)
    if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
        base = anchor.value
    elif isinstance(anchor, ast.Name) and anchor.id in ("__name__", "__package__"):
        base = module if anchor.id == "__name__" else pkg
    else:
        return None
    dots = len(name) - len(name.lstrip("."))
    parts = base.split(".")
    return ".".join(parts[: len(parts) - dots + 1] + [name[dots:]]) if name[dots:] else ".".join(parts[: len(parts) - dots + 1])
