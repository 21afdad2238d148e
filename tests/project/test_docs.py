"""The documentation: the MkDocs site builds with warnings as errors (every page in the nav, every link
and anchor found, the API pages rendered from the docstrings), README stays short and links every page,
and no page speaks of how the project was developed or names a folder a clone does not have."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from common import DOC_FILES, ROOT


def test_the_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]'; make test installs it)")
    pytest.importorskip("mkdocstrings")
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    env_page = (tmp_path / "site" / "api" / "env" / "index.html").read_text()
    assert "raw_env" in env_page and "action_mask" in env_page  # the env's docstring is its page


def test_readme_is_short_and_links_every_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 80
    assert readme.startswith("# ddz-env") and "make demo" in readme and "make test" in readme
    # each of the two jobs says how long it takes, beside its command (issue 47: make test's 14 minutes)
    assert re.search(r"^make demo .*~?\d+(\.\d+)? min", readme, re.M) and re.search(r"^make test .*about \d+ minutes",
                                                                                        readme, re.M), readme[:800]
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")
    for page in pages:
        assert f"]({page})" in readme, f"README does not link {page}"
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in pages:
        assert page.removeprefix("docs/") in nav, f"{page} is not in mkdocs.yml's nav"


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_speaks_of_the_projects_development(path):
    text = path.read_text()
    for pattern in (r"\b[Ii]ssue \d+", r"\bwork items?\b", r"/work/", r"\bwt-[a-z]+", r"\bsession\b"):
        found = re.search(pattern, text)
        assert not found, f"{path.name}: {found.group(0)!r} at line {text.count(chr(10), 0, found.start()) + 1}"
