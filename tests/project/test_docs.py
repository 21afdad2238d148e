"""The documentation: the MkDocs site builds with warnings as errors (every page in the nav, every link
and anchor found, the API pages rendered from the docstrings), its pages show no raw reST markup (a
Sphinx role, a table's rule of ``=``) and their table of contents stays in its sidebar at 1280 px, the
programs' ``--help`` is plain words, README stays short and links every page, and no page speaks of how
the project was developed or names a folder a clone does not have."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from common import DOC_FILES, ROOT

#: a Sphinx role as the page would show it when a docstring's reST reaches Markdown raw
ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc):")
#: the rule of a reST table (``=====  =====``), a line of four or more ``=`` (spaces between)
TABLE_RULE = re.compile(r"^[ \t]*={4,}[ =\t]*$", re.M)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once for the module (``mkdocs build --strict``): the folder of its HTML."""
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]'; make test installs it)")
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("docs") / "site"
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def pages(site: Path) -> list[Path]:
    found = sorted(site.rglob("*.html"))
    assert len(found) > 10, found
    return found


class _Text(HTMLParser):
    """The text a browser shows of an HTML page (scripts and styles left out), a block element on a new line."""

    BLOCKS = {"p", "div", "li", "tr", "td", "th", "pre", "br", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd"}

    def __init__(self):
        super().__init__()
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style")
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def test_the_site_builds_strict(site):
    env_page = (site / "api" / "env" / "index.html").read_text()
    assert "raw_env" in env_page and "action_mask" in env_page  # the env's docstring is its page


def test_no_page_shows_raw_rest_markup(site):
    """Docstrings are Markdown for mkdocstrings: a Sphinx role (``:class:`` before a name) or a reST table (rows
    of ``=====`` running off the page) would show as typed. Every built page's visible text, API pages included."""
    problems = []
    for page in pages(site):
        text = visible_text(page.read_text())
        for m in [*ROLE.finditer(text), *TABLE_RULE.finditer(text)]:
            problems.append(f"{page.relative_to(site)}: {text[max(0, m.start() - 60):m.end() + 40]!r}")
    assert not problems, "\n".join(problems)
    api = (site / "api" / "integrations" / "index.html").read_text()
    assert "<table>" in (site / "api" / "core" / "index.html").read_text() and "<li><strong>state encoder" in api


class _Rows(HTMLParser):
    """The body rows of a page's tables (rows of ``<td>`` cells): each a list of its cells' text."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td" and self.rows:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def test_no_table_row_has_an_empty_first_cell(site):
    """The Library adapters page showed three rows with an empty first cell under the single-seat env's table:
    a Markdown table in a docstring whose long rows went on, wrapped, in rows of their own (``|  | (reward=...``).
    Every table of every built page, the API pages from the docstrings included: each body row names its first
    cell (a header's corner may be empty)."""
    problems = []
    for page in pages(site):
        parser = _Rows()
        parser.feed(page.read_text())
        for row in parser.rows:
            if row and not row[0]:
                problems.append(f"{page.relative_to(site)}: {row}")
    assert not problems, "\n".join(problems)
    api = _Rows()
    api.feed((site / "api" / "integrations" / "index.html").read_text())
    assert any(row[:1] == ["Illegal action"] and "TypeError" in row[1] for row in api.rows), api.rows


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


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")

#: every TOC entry's boxes whose right edge passes the main column's left edge, and the page's sideways scroll
_OVERLAP = """
const main = document.querySelector('[role=main]'), links = document.querySelectorAll('.bs-sidebar a');
if (document.readyState !== 'complete' || !main || !links.length) return null;
const left = main.getBoundingClientRect().left, over = [];
for (const a of links) for (const r of a.getClientRects())
  if (r.width > 0 && r.right > left + 1) over.push(a.textContent.trim() + ' (right ' + Math.round(r.right) + ')');
return {left: Math.round(left), over: over, scroll: document.documentElement.scrollWidth - window.innerWidth};
"""


@pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromedriver are not installed "
                    "(apt-get install chromium chromium-driver; .ci/run does it)")
def test_the_table_of_contents_stays_in_its_sidebar_at_1280_px(site):
    """At a desktop's 1280 x 1000 no entry of a page's table of contents (a long heading: the MARL page's, with
    file paths) reaches over the text beside it, and no page scrolls sideways (a reST table's rules did)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the dev extra) is not installed")
    from selenium.webdriver.chrome.options import Options
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    problems = []
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        for page in pages(site):
            name = page.relative_to(site).as_posix()
            if name in ("404.html", "search/index.html"):  # (no table of contents)
                continue
            driver.get(page.as_uri())
            try:  # (on a loaded machine the page may still be laying out when get returns)
                found = WebDriverWait(driver, 20).until(lambda d: d.execute_script(_OVERLAP))
            except TimeoutException:
                pytest.fail(f"{name} ({driver.current_url}): no sidebar or main column (the theme changed: update "
                            "the selectors)")
            problems += [f"{name}: over the text at x={found['left']}: {entry}" for entry in found["over"]]
            if found["scroll"] > 0:
                problems.append(f"{name}: scrolls sideways by {found['scroll']} px")
    finally:
        driver.quit()
    assert not problems, "\n".join(problems)


def _entries() -> list[list[str]]:
    """Every program a reader runs: the scripts at the root, the modules behind the installed commands and
    ``python -m`` names, and every example and benchmark with options (most print their docstring)."""
    out = [["train.py"], ["evaluate.py"], ["demo.py"]]
    out += [["-m", m] for m in ("agents.cli.train", "agents.cli.evaluate", "agents.cli.compare", "agents.cli.calibrate",
                                "agents.play", "agents.play.web", "agents.export", "agents.dmc.export")]
    for folder in ("examples", "benchmarks"):
        out += [[f"{folder}/{p.name}"] for p in sorted((ROOT / folder).glob("*.py")) if "argparse" in p.read_text()]
    return out


@pytest.mark.parametrize("entry", _entries(), ids=" ".join)
def test_help_is_plain_words(entry):
    """``--help`` prints a docstring read as plain text: no Sphinx role, no double backquotes of reST's inline code."""
    p = subprocess.run([sys.executable, *entry, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    if p.returncode and ("ModuleNotFoundError" in p.stderr or "is not installed" in p.stderr):
        pytest.skip(f"{' '.join(entry)} needs a package this Python lacks: {p.stderr.strip().splitlines()[-1]}")
    assert p.returncode == 0 and p.stdout.startswith("usage:"), p.stdout[-500:] + p.stderr[-2000:]
    markup = [line for line in p.stdout.splitlines() if ROLE.search(line) or "``" in line]
    assert not markup, "\n".join(markup)


def test_plain_reads_roles_and_inline_code_as_words():
    from agents._entry import plain

    assert plain("A config's ``algo`` key (:mod:`agents.runs.algos`); :class:`~ddz_env.rules.Deal`, "
                 ":meth:`BatchState.load_view <ddz_env.batch.BatchState.load_view>`, ``--a\n  b``.") == (
        "A config's algo key (agents.runs.algos); ddz_env.rules.Deal, BatchState.load_view, --a\n  b.")
