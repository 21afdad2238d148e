"""``benchmarks/paired.py``: the paired per-deal difference of two evaluations on the same deals."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from common import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import paired  # noqa: E402


def result(name: str, per_deal: list[float], **config) -> dict:
    return {"config": {"a": name, "b": "rule", "deals": len(per_deal), "seed": 11, "mode": "duplicate",
                       "rules": "rulebook", **config}, "per_deal_score_a": per_deal}


def test_the_difference_is_taken_deal_by_deal():
    rng = np.random.default_rng(0)
    luck = rng.normal(0, 5, 400)  # the deal's luck, the same for both
    a = luck + rng.normal(0, 0.5, 400)
    b = a + 0.3 + rng.normal(0, 0.1, 400)
    r = paired.paired(result("A", a.tolist()), result("B", b.tolist()))
    m, lo, hi = r["difference"]
    assert lo < 0.3 < hi and hi - lo < 0.05 and abs(m - float(np.mean(b - a))) < 1e-12
    # unpaired, the two intervals overlap: the luck hides the gain
    assert r["mean_a"][2] > r["mean_b"][1]


@pytest.mark.parametrize("key, value", [("seed", 12), ("b", "random"), ("mode", "fixed-landlord")])
def test_evaluations_of_other_deals_are_refused(key, value):
    with pytest.raises(ValueError, match=key):
        paired.paired(result("A", [1.0, 2.0]), result("B", [1.0, 2.0], **{key: value}))


def test_the_command_prints_the_difference_and_refuses_a_mismatch_in_one_line(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(result("A", [0.0, 1.0, 2.0, 3.0])))
    (tmp_path / "b.json").write_text(json.dumps(result("B", [1.0, 2.0, 3.0, 4.0])))
    (tmp_path / "c.json").write_text(json.dumps(result("C", [1.0, 2.0, 3.0, 4.0], seed=5)))
    run = [sys.executable, str(ROOT / "benchmarks" / "paired.py")]
    p = subprocess.run(run + [str(tmp_path / "a.json"), str(tmp_path / "b.json")], capture_output=True, text=True)
    assert p.returncode == 0 and "B - A, paired per deal: +1.000" in p.stdout, p.stdout + p.stderr
    p = subprocess.run(run + [str(tmp_path / "a.json"), str(tmp_path / "c.json")], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "seed" in p.stderr, p.stderr


def paired_command(*paths) -> subprocess.CompletedProcess:
    """``benchmarks/paired.py`` on ``paths``, in a subprocess that may not hang (a FIFO read waited for ever)."""
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "paired.py"), *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


def refused(p: subprocess.CompletedProcess) -> str:
    """The one line of a refusal (exit 2, no traceback)."""
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("paired.py: error: ") and p.stdout == "", p.stderr
    return p.stderr


def test_a_fifo_or_a_folder_given_as_an_evaluation_is_refused_before_it_is_opened(tmp_path):
    """Issue 62, N47: ``paired.py FIFO b.json`` waited for ever for a writer; a folder gave a traceback-free
    but misleading OS error. Each is refused, named, in one line, before anything opens it."""
    import os

    good = tmp_path / "b.json"
    good.write_text(json.dumps(result("B", [1.0, 2.0])))
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert "is a FIFO, not a regular file" in refused(paired_command(fifo, good))
    assert "is a directory, not a regular file" in refused(paired_command(good, tmp_path))
    assert "not found" in refused(paired_command(tmp_path / "missing.json", good))


def test_an_evaluation_file_larger_than_the_bound_is_refused_unread(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(paired.MAX_EVALUATION_BYTES + 1)  # (sparse: nothing is written, nothing would be read)
    good = tmp_path / "b.json"
    good.write_text(json.dumps(result("B", [1.0, 2.0])))
    assert f"more than the {paired.MAX_EVALUATION_BYTES:,} it may be" in refused(paired_command(big, good))


@pytest.mark.parametrize("text, says", [
    ("{\"config\": {", "is not JSON"),
    (b"\xff\xfe not text", "is not JSON (not UTF-8 text"),
    ("[1, 2, 3]", "not an evaluate.py --out result"),
    ("{\"per_deal_score_a\": [1.0]}", "not an evaluate.py --out result"),
    ("{\"config\": {\"deals\": 2}, \"per_deal_score_a\": {\"0\": 1.0}}", "no per-deal scores"),
    ("{\"config\": {\"deals\": 0}, \"per_deal_score_a\": []}", "no per-deal scores"),
    ("{\"config\": {\"deals\": 2}, \"per_deal_score_a\": [1.0, \"2\"]}", "holds '2', not a finite number"),
    ("{\"config\": {\"deals\": 2}, \"per_deal_score_a\": [1.0, NaN]}", "holds nan, not a finite number"),
    ("{\"config\": {\"deals\": 2}, \"per_deal_score_a\": [1.0, true]}", "holds True, not a finite number"),
    ("{\"config\": {\"deals\": 2}, \"per_deal_score_a\": [1.0, 1" + "0" * 400 + "]}", "not a finite number"),
    ("{\"config\": {\"deals\": 3}, \"per_deal_score_a\": [1.0, 2.0]}", "2 per-deal scores for 3 deals"),
    ("[" * 100000 + "]" * 100000, "nested too deep"),
])
def test_malformed_json_or_the_wrong_structure_is_refused_in_one_line_with_exit_2(tmp_path, text, says):
    """Issue 62, N47: these ended in a traceback (``JSONDecodeError``, ``AttributeError: 'list' object has no
    attribute 'get'``, ``TypeError``), or in NaN figures; each is one line naming the file, exit 2."""
    bad = tmp_path / "a.json"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    good = tmp_path / "b.json"
    good.write_text(json.dumps(result("B", [1.0, 2.0])))
    line = refused(paired_command(bad, good))
    assert says in line and str(bad) in line, line


def test_the_function_refuses_results_of_the_wrong_shape_with_a_value_error():
    with pytest.raises(ValueError, match="not an evaluate.py --out result"):
        paired.paired([1.0], result("B", [1.0, 2.0]))
    with pytest.raises(ValueError, match="3 and 2 per-deal scores"):
        paired.paired({"config": {"deals": None, "seed": 11, "mode": "duplicate", "b": "rule", "rules": "rulebook"},
                       "per_deal_score_a": [1.0, 2.0, 3.0]},
                      {"config": {"deals": None, "seed": 11, "mode": "duplicate", "b": "rule", "rules": "rulebook"},
                       "per_deal_score_a": [1.0, 2.0]})
