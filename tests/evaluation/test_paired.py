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
