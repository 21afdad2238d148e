"""ddz_env.rules: the once-per-hand rulings as pure functions, scalars and arrays alike (one place
for each ruling; Game and VectorDouDizhu both call them)."""
import itertools

import numpy as np
import pytest

from ddz_env import rules
from ddz_env.actions import BID_1, BID_2, BID_3, BID_PASS, NO_DOUBLE, NO_REDOUBLE
from ddz_env.cards import parse_cards
from ddz_env.moves import PASS, move_id
from ddz_env.rules import Phase


def test_r3_legal_bids_top_the_bid_so_far():
    assert rules.legal_bids(0).tolist() == [BID_PASS, BID_1, BID_2, BID_3]
    assert rules.legal_bids(2).tolist() == [BID_PASS, BID_3]
    assert rules.legal_bids(3).tolist() == [BID_PASS]


def _bid_sequence(values):
    bids, top = np.full(3, -1), 0
    out = None
    for seat, v in enumerate(values):
        bids[seat] = v
        out = rules.bid_outcome(bids, v, top)
        top = int(out[0])
        if out[1]:
            break
    return out


def test_r3_r4_bid_outcome_scalar_cases():
    top, over, void, lord = _bid_sequence([1, 0, 2])
    assert (int(top), bool(over), bool(void), int(lord)) == (2, True, False, 2)
    top, over, void, lord = _bid_sequence([0, 3])  # a 3 ends the bidding at once (R3)
    assert (int(top), bool(over), bool(void), int(lord)) == (3, True, False, 1)
    top, over, void, lord = _bid_sequence([0, 0, 0])  # R4: three passes void the hand
    assert (bool(over), bool(void), int(lord)) == (True, True, -1)
    top, over, void, lord = rules.bid_outcome([1, -1, -1], 1, 0)
    assert (int(top), bool(over), int(lord)) == (1, False, -1)


def test_bid_outcome_arrays_equal_the_scalar_calls():
    cases = []
    for values in itertools.product(range(4), repeat=3):  # every complete or partial bidding of 3 seats
        bids, top = np.full(3, -1), 0
        for seat, v in enumerate(values):
            if seat and v and v <= top:
                break  # not a legal sequence
            bids[seat] = v
            cases.append((bids.copy(), v, top))
            top = max(top, v)
            if v == 3:
                break
    b = np.stack([c[0] for c in cases])
    v = np.array([c[1] for c in cases])
    t = np.array([c[2] for c in cases])
    arr = rules.bid_outcome(b, v, t)
    for i, (bids, value, top) in enumerate(cases):
        one = rules.bid_outcome(bids, value, top)
        assert [int(x) for x in one] == [int(x[i]) for x in arr]


def test_r4_next_first_bidder_and_r5_r6_doubling():
    assert rules.next_first_bidder(2) == 0 and rules.next_first_bidder(np.array([0, 1])).tolist() == [1, 2]
    first, second = rules.doubling_order(np.array([0, 1, 2]))
    assert first.tolist() == [1, 2, 0] and second.tolist() == [2, 0, 1]
    assert not rules.redouble_allowed([-1, 0, 0]) and rules.redouble_allowed([-1, 0, 1])
    assert rules.redouble_allowed(np.array([[0, -1, 0], [1, 0, -1]])).tolist() == [False, True]


def test_r20_default_actions_per_phase_scalar_and_array():
    hand = parse_cards("5577TJ")
    assert rules.default_actions(Phase.BID, PASS, hand) == BID_PASS
    assert rules.default_actions(Phase.DOUBLE, PASS, hand) == NO_DOUBLE
    assert rules.default_actions(Phase.REDOUBLE, PASS, hand) == NO_REDOUBLE
    assert rules.default_actions(Phase.PLAY, PASS, hand) == move_id("5")  # lead the smallest single
    assert rules.default_actions(Phase.PLAY, move_id("33"), hand) == PASS  # respond: pass
    phases = np.array([Phase.BID, Phase.PLAY, Phase.PLAY])
    arr = rules.default_actions(phases, np.array([PASS, PASS, move_id("9")]), np.stack([hand] * 3))
    assert arr.tolist() == [BID_PASS, move_id("5"), PASS]


def test_rewards_score_and_win():
    scores = np.array([[4, -8, 4], [0, 0, 0]])
    assert rules.rewards(scores, [0, -1], [1, -1], "score", 0.5).tolist() == [[2, -4, 2], [0, 0, 0]]
    assert rules.rewards(scores, [0, -1], [1, -1], "win").tolist() == [[1, -1, 1], [0, 0, 0]]
    assert rules.rewards([6, -3, -3], 0, 0, "win", 2.0).tolist() == [2, -2, -2]
    with pytest.raises(ValueError, match="'score' or 'win'"):
        rules.rewards(scores, 0, 0, "points")


def test_deal_hand_is_one_deck_and_draws_the_first_bidder():
    h, b, fb = rules.deal_hand(np.random.default_rng(0))
    assert h.sum(axis=1).tolist() == [17, 17, 17] and b.sum() == 3 and fb in (0, 1, 2)
    assert (h.sum(axis=0) + b).tolist() == [4] * 13 + [1, 1]
    h2, b2, fb2 = rules.deal_hand(np.random.default_rng(0))
    assert (h2 == h).all() and (b2 == b).all() and fb2 == fb
