"""README's table of learners: every row names its committed policy (a file that loads as an agent) or the
command that makes it (a shipped config whose overrides and options check), and the text above it gives the
league's deals and seed as the committed results record them."""
from __future__ import annotations

import json
import re
import shlex

import pytest

from common import ROOT

README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results" / "marl" / "results.json"


def table() -> tuple[str, list[list[str]]]:
    """(the paragraph above the table, its rows as cells) of README's "MARL libraries" section."""
    text = README.read_text()
    section = text.split("## MARL libraries", 1)[1].split("\n## ", 1)[0]
    head, _, rest = section.partition("\n| learner |")
    lines = ("| learner |" + rest).splitlines()
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines[2:] if line.startswith("|")]
    return head, rows


def test_every_row_has_a_policy_cell():
    _, rows = table()
    assert len(rows) >= 6
    for row in rows:
        assert len(row) == 5, row
        cell = row[4]
        assert re.fullmatch(r"\[`[^`]+\.pt`\]\([^)]+\.pt\)", cell) or cell.startswith("not kept; make it: `python "), row


def test_the_committed_policies_exist_and_load():
    from agents import load

    _, rows = table()
    linked = [re.search(r"\]\(([^)]+)\)", row[4]).group(1) for row in rows if row[4].startswith("[")]
    assert linked
    for path in linked:
        assert (ROOT / path).is_file(), path
        agent = load(str(ROOT / path))
        assert callable(getattr(agent, "act_batch", None)), path


def test_the_make_it_commands_are_valid_configs():
    from agents.dmc.config import load_config
    from agents.runs.library import check_options, learner_module
    from agents.runs.algos import LIBRARY_SCHEMA, algo_of

    _, rows = table()
    commands = [re.search(r"make it: `([^`]+)`", row[4]).group(1) for row in rows if "make it:" in row[4]]
    assert commands
    for command in commands:
        argv = shlex.split(command)
        assert argv[:4] == ["python", "train.py", "--config", argv[3]] and (ROOT / "configs" / f"{argv[3]}.yaml").is_file()
        sets = argv[4:]
        assert all(flag == "--set" for flag in sets[::2]), command
        overrides = sets[1::2]
        algo = algo_of(ROOT / "configs" / f"{argv[3]}.yaml", overrides)
        if algo == "dmc":
            load_config(argv[3], overrides)  # raises on an unknown key or a bad value
        else:
            check_options(LIBRARY_SCHEMA.load(argv[3], overrides), learner_module(algo))


def test_the_table_gives_the_leagues_deals_and_seed():
    head = " ".join(table()[0].split())
    results = json.loads(RESULTS.read_text())
    assert f"{results['deals']:,} deals" in head and f"seed {results['seed']}" in head, head


@pytest.mark.parametrize("bad", ["not kept", "[`x.pt`](benchmarks/results/marl/missing.pt)"])
def test_a_row_without_a_policy_or_with_a_missing_one_is_caught(bad, monkeypatch, tmp_path):
    """The checks above fail on a row that names no way to its policy, or a file that is not there."""
    text = README.read_text()
    row = next(line for line in text.splitlines() if "benchmarks/results/marl/sb3.pt" in line and line.startswith("|"))
    cells = row.strip().strip("|").split(" | ")
    broken = "| " + " | ".join(cells[:4] + [bad]) + " |"
    fake = tmp_path / "README.md"
    fake.write_text(text.replace(row, broken))
    monkeypatch.setattr(__import__(__name__), "README", fake)
    with pytest.raises(AssertionError):
        test_every_row_has_a_policy_cell()
        test_the_committed_policies_exist_and_load()
