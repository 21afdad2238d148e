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
