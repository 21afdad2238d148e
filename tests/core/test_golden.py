"""The golden playthrough (tests/core/golden/playthrough.txt): any change to the rules, the legal sets or
the observation planes shows up here as a diff. Regenerate it on purpose with
``python tests/core/golden/make_golden.py`` and review the diff."""
import difflib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "golden"))
import make_golden  # noqa: E402

from ddz_env.cards import as_counts  # noqa: E402
from ddz_env.rules import Rules  # noqa: E402
from ddz_env.vector import VectorDouDizhu  # noqa: E402


def test_playthrough_matches_the_golden_file():
    text, _ = make_golden.playthrough()
    old = make_golden.PATH.read_text()
    diff = "".join(list(difflib.unified_diff(old.splitlines(True), text.splitlines(True), "golden", "now"))[:60])
    assert text == old, ("the playthrough changed (rules, legal sets or planes); if intended, run "
                         "python tests/core/golden/make_golden.py and review the diff:\n" + diff)


def test_batched_env_plays_the_golden_hands_identically():
    """The same actions on VectorDouDizhu (one table per hand): the same legal sets, the same planes
    of the seat to act at every step, the same scores."""
    text, histories = make_golden.playthrough()
    steps = [line.split() for line in text.splitlines() if line.startswith("  ") and "planes" in line and "->" in line]
    ends = [line for line in text.splitlines() if line.startswith("  end:")]
    k = 0
    for h, (_, seed, first, landlord, doubling, _) in enumerate(make_golden.HANDS):
        from ddz_env.game import Game

        rules = Rules(bidding=landlord is None, doubling=doubling)
        g = Game.deal(seed, first_bidder=first, rules=rules, landlord=landlord)
        vec = VectorDouDizhu(1, rules=rules)
        fb = first if landlord is None else landlord
        vec.load_deals([0], g.initial_hands[None], as_counts(g.bottom)[None], [fb])
        for seat, a in histories[h]:
            _, ids, starts = vec.legal_sets()
            legal = ids[starts[0]:starts[1]]
            want = steps[k]
            assert int(want[2]) == seat == int(vec.current_player[0])
            shown = (" ".join(map(str, legal.tolist())) if legal.size <= 12
                     else f"n={legal.size} {make_golden.digest(legal)}")
            line = " ".join(want)
            assert f"legal [{shown}]" in line
            assert f"planes {make_golden.digest(vec.observe()[0])}" in line, (h, k)
            _, _, done, info = vec.step(np.array([a]), observe=False)
            k += 1
        assert done[0]
        assert f"scores {info['final_scores'][0].tolist()}" in ends[h]
    assert k == len(steps)
