"""R18/R19 scoring as pure functions (``ddz_env.scoring``), scalar and batched."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ddz_env.scoring import hand_scores, multiplier_exponents


def doubled_for(landlord: int, *farmer_flags: bool) -> list[bool]:
    """(3,) doubled flags: the farmers after the landlord, in seat order, get ``farmer_flags``."""
    d = [False, False, False]
    for k, flag in enumerate(farmer_flags):
        d[(landlord + 1 + k) % 3] = bool(flag)
    return d


def reference(bid, landlord, doubled, redoubled, bombs, rockets, spring, anti_spring, farmers_won):
    """R19 written out in plain Python integers."""
    s = 1 if farmers_won else -1
    out = [0, 0, 0]
    for i in range(3):
        if i == landlord:
            continue
        d = int(doubled[i])
        out[i] = bid * s * 2 ** (bombs + rockets + int(spring) + int(anti_spring) + d + d * int(redoubled))
    out[landlord] = -sum(out)
    return out


def test_r19_worked_example():
    # bid 3; farmer 1 doubles, farmer 2 does not; landlord redoubles; one rocket, one bomb; farmers win
    got = hand_scores(3, 0, [False, True, False], True, 1, 1, False, False, True)
    assert got.tolist() == [-60, 48, 12]
    assert got.dtype == np.int64 and got.shape == (3,)


@pytest.mark.parametrize("landlord", [0, 1, 2])
def test_r19_worked_example_any_landlord_seat(landlord):
    d = doubled_for(landlord, True, False)
    got = hand_scores(3, landlord, d, True, 1, 1, False, False, True).tolist()
    f1, f2 = (landlord + 1) % 3, (landlord + 2) % 3
    assert (got[landlord], got[f1], got[f2]) == (-60, 48, 12)


def test_r19_farmers_losing_flips_the_sign():
    got = hand_scores(3, 0, [False, True, False], True, 1, 1, False, False, False)
    assert got.tolist() == [60, -48, -12]


def test_r19_base_score_is_the_bid():
    for bid in (1, 2, 3):
        assert hand_scores(bid, 1, [False] * 3, False, 0, 0, False, False, True).tolist() == [bid, -2 * bid, bid]
        assert hand_scores(bid, 1, [False] * 3, False, 0, 0, False, False, False).tolist() == [-bid, 2 * bid, -bid]


def test_r19_void_hand_scores_zero():
    assert hand_scores(0, 0, [False] * 3, False, 0, 0, False, False, True).tolist() == [0, 0, 0]
    assert hand_scores(0, 2, [False, True, False], True, 3, 1, False, False, False).tolist() == [0, 0, 0]


def test_r19_scores_sum_to_zero_and_match_formula_on_a_grid():
    n = 0
    for bid, ll, d1, d2, r, bombs, rockets, spring, anti, won in itertools.product(
            (1, 2, 3), (0, 1, 2), (0, 1), (0, 1), (0, 1), (0, 1, 3), (0, 1), (0, 1), (0, 1), (0, 1)):
        if spring and won or anti and not won:  # spring only when the landlord wins, anti-spring the farmers
            continue
        d = doubled_for(ll, d1, d2)
        got = hand_scores(bid, ll, d, bool(r), bombs, rockets, bool(spring), bool(anti), bool(won))
        assert got.tolist() == reference(bid, ll, d, r, bombs, rockets, spring, anti, won)
        assert int(got.sum()) == 0
        n += 1
    assert n > 1000


def test_r6_redouble_applies_only_to_doubling_farmers():
    base = hand_scores(2, 0, [False, True, False], False, 0, 0, False, False, True).tolist()
    red = hand_scores(2, 0, [False, True, False], True, 0, 0, False, False, True).tolist()
    assert base == [-6, 4, 2]
    assert red == [-10, 8, 2]  # only farmer 1's score doubles again
    # redouble with no doubling changes nothing
    plain = hand_scores(2, 0, [False] * 3, False, 0, 0, False, False, True).tolist()
    assert hand_scores(2, 0, [False] * 3, True, 0, 0, False, False, True).tolist() == plain == [-4, 2, 2]


def test_r5_doubling_doubles_only_that_farmer():
    got = hand_scores(1, 2, [True, False, False], False, 0, 0, False, False, False).tolist()
    assert got == [-2, -1, 3]


@pytest.mark.parametrize("field", ["bombs", "rockets", "spring", "anti_spring"])
def test_r18_each_multiplier_doubles(field):
    kw = dict(bid=2, landlord=1, doubled=[True, False, False], redoubled=True, bombs=1, rockets=0,
              spring=False, anti_spring=False, farmers_won=field != "spring")
    before = hand_scores(**kw)
    kw[field] = kw[field] + 1 if field in ("bombs", "rockets") else True
    after = hand_scores(**kw)
    assert np.array_equal(after, 2 * before)
    assert before.any()


def test_r18_two_bombs_and_a_rocket():
    got = hand_scores(1, 0, [False] * 3, False, 2, 1, False, False, False)
    assert got.tolist() == [16, -8, -8]


def test_r18_largest_scores_are_exact():
    # 13 bombs, the rocket, anti-spring, both doubled and redoubled: 3 * 2^17 per farmer, no overflow
    got = hand_scores(3, 0, [False, True, True], True, 13, 1, False, True, True)
    assert got.tolist() == [-2 * 3 * 2 ** 17, 3 * 2 ** 17, 3 * 2 ** 17]


def test_multiplier_exponents():
    n = multiplier_exponents([False, True, False], True, 1, 1, False, False)
    assert n.tolist() == [2, 4, 2]
    n = multiplier_exponents([False, False, True], False, 0, 0, True, False)
    assert n.tolist() == [1, 1, 2]


def test_hand_scores_batched_matches_scalar():
    rng = np.random.default_rng(0)
    B = 500
    bid = rng.integers(0, 4, B)
    ll = rng.integers(0, 3, B)
    d = rng.integers(0, 2, (B, 3)).astype(bool)
    d[np.arange(B), ll] = False
    r = rng.integers(0, 2, B).astype(bool)
    bombs = rng.integers(0, 4, B)
    rockets = rng.integers(0, 2, B)
    won = rng.integers(0, 2, B).astype(bool)
    spring = ~won & (rng.random(B) < 0.3)
    anti = won & (rng.random(B) < 0.3)
    got = hand_scores(bid, ll, d, r, bombs, rockets, spring, anti, won)
    assert got.shape == (B, 3) and got.dtype == np.int64
    assert (got.sum(axis=1) == 0).all()
    for i in range(B):
        want = reference(int(bid[i]), int(ll[i]), d[i], r[i], int(bombs[i]), int(rockets[i]),
                         spring[i], anti[i], won[i])
        assert got[i].tolist() == want
        assert hand_scores(bid[i], ll[i], d[i], r[i], bombs[i], rockets[i], spring[i], anti[i],
                           won[i]).tolist() == want


def test_hand_scores_broadcasts_shared_arguments():
    # one deal's doubling, scored for several outcomes at once
    won = np.array([True, False, True])
    bombs = np.array([0, 1, 2])
    got = hand_scores(3, 0, [False, True, False], True, bombs, 0, False, False, won)
    assert got.tolist() == [[-15, 12, 3], [30, -24, -6], [-60, 48, 12]]


def test_r18_spring_flags_shared_by_both_engines():
    from ddz_env.scoring import spring_flags
    # landlord won, farmers never played: spring; farmers won, landlord played once: anti-spring
    spring, anti = spring_flags(np.array([False, False, True, True]), np.array([3, 3, 1, 2]), np.array([0, 1, 4, 4]))
    assert spring.tolist() == [True, False, False, False]
    assert anti.tolist() == [False, False, True, False]


# --------------------------------------------------------------------------- finishing a hand (issue 23)
def test_r17_r18_r19_finish_hand_scalar_and_arrays():
    """scoring.finish_hand, the one place a hand is finished (Game._finish, VectorDouDizhu.step): the
    farmers won when a farmer went out (R17), the spring flags from the plays (R18), then the scores."""
    from ddz_env.scoring import finish_hand

    # the rulebook example: bid 3, farmer 1 doubles, the landlord redoubles, a rocket and a bomb, farmers win
    won, spring, anti, scores = finish_hand(1, 0, [3, 2, 4], 3, [False, True, False], True, 1, 1)
    assert (bool(won), bool(spring), bool(anti), scores.tolist()) == (True, False, False, [-60, 48, 12])
    _, spring, anti, scores = finish_hand(2, 2, [0, 0, 5], 1, [False] * 3, False, 0, 0)  # the farmers never played
    assert (bool(spring), bool(anti), scores.tolist()) == (True, False, [-2, -2, 4])
    _, spring, anti, scores = finish_hand(0, 1, [6, 1, 2], 2, [False] * 3, False, 0, 0)  # the landlord led once
    assert (bool(spring), bool(anti), scores.tolist()) == (False, True, [4, -8, 4])
    rng = np.random.default_rng(0)
    n = 300
    winner, landlord = rng.integers(3, size=n), rng.integers(3, size=n)
    moves = rng.integers(0, 3, size=(n, 3))
    bid, bombs, rockets = rng.integers(1, 4, size=n), rng.integers(0, 3, size=n), rng.integers(0, 2, size=n)
    doubled = (rng.random((n, 3)) < 0.5) & (np.arange(3) != landlord[:, None])
    redoubled = doubled.any(axis=1) & (rng.random(n) < 0.5)
    arr = finish_hand(winner, landlord, moves, bid, doubled, redoubled, bombs, rockets)
    assert arr[3].shape == (n, 3) and (arr[3].sum(axis=1) == 0).all()
    for i in range(n):
        one = finish_hand(int(winner[i]), int(landlord[i]), moves[i], int(bid[i]), doubled[i], bool(redoubled[i]),
                          int(bombs[i]), int(rockets[i]))
        assert [np.asarray(x).tolist() for x in one] == [x[i].tolist() for x in arr]
        lm = int(moves[i, landlord[i]])
        fw = winner[i] != landlord[i]
        assert one[3].tolist() == reference(int(bid[i]), int(landlord[i]), doubled[i], bool(redoubled[i]),
                                            int(bombs[i]), int(rockets[i]), not fw and moves[i].sum() == lm,
                                            fw and lm == 1, fw)
