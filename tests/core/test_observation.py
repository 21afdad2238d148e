"""Observation planes (``ddz_env.observation``): one test per channel group, decoding a
known position built from a fixed deal and a known action sequence, then properties on
random hands (thermometer codes, conservation, consistency with the batched ``encode``).

The fixed hand (first bidder seat 1):

    seat 0  33344455566677788
    seat 1  899TTTJJJQQQKKKAA
    seat 2  3456789TJQKA2222B
    bottom  9AR

Bidding: seat 1 bids 1, seat 2 bids 2, seat 0 passes -> seat 2 is landlord at 2.
Doubling: seat 0 (the farmer after the landlord) doubles, seat 1 does not; the landlord
does not redouble. Then the plays of ``PLAYS`` below. Relative seats: 0 self, 1 next,
2 previous.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ddz_env
from ddz_env import Game, Phase
from ddz_env.actions import action_from_string
from ddz_env.cards import MAX_COUNTS, parse_cards
from ddz_env.moves import MOVE_COUNTS
from ddz_env.observation import (
    PublicView,
    CH_BIDS, CH_BOTTOM, CH_CARDS_LEFT, CH_DOUBLING, CH_HAND, CH_HISTORY, CH_HISTORY_SEATS, CH_PLAYED, CH_STATUS,
    CH_TO_BEAT, CH_UNSEEN, HISTORY, NUM_CHANNELS, OBS_SHAPE, decode_cards, encode, observe_game,
)

H0, H1, H2, BOTTOM = "33344455566677788", "899TTTJJJQQQKKKAA", "3456789TJQKA2222B", "9AR"
DEAL = {"hands": [H0, H1, H2], "bottom": BOTTOM, "first_bidder": 1}
BIDS = ["bid 1", "bid 2", "bid pass"]          # seats 1, 2, 0
DOUBLES = ["double", "no double"]              # seats 0, 1
REDOUBLE = ["no redouble"]                     # seat 2
PLAYS = [  # (seat, move)
    (2, "34567"), (0, "45678"), (1, "pass"),
    (2, "2222"), (0, "pass"), (1, "pass"),
    (2, "99"), (0, "pass"), (1, "TT"),
    (2, "BR"), (0, "pass"), (1, "pass"),
    (2, "8"), (0, "pass"), (1, "9"),
    (2, "T"), (0, "pass"), (1, "A"),
    (2, "pass"), (0, "pass"),
]
DECK = MAX_COUNTS.astype(np.int64)


def c(text: str) -> np.ndarray:
    return parse_cards(text).astype(np.int64)


def game_at(n_bids=3, n_doubles=2, n_redouble=1, n_plays=0) -> Game:
    """The fixed hand after the given number of actions of each phase."""
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], DEAL["first_bidder"])
    script = [(None, x) for x in BIDS[:n_bids]]
    if n_bids == 3:
        script += [(None, x) for x in DOUBLES[:n_doubles]]
        if n_doubles == 2:
            script += [(None, x) for x in REDOUBLE[:n_redouble]]
            if n_redouble == 1:
                script += PLAYS[:n_plays]
    for seat, x in script:
        g.step(action_from_string(x), seat=seat)
    return g


def obs(g: Game, seat: int) -> np.ndarray:
    o = observe_game(g, seat)
    assert o.shape == OBS_SHAPE == (29, 4, 15) and o.dtype == np.int8
    return o


def cards(o: np.ndarray, ch: int) -> np.ndarray:
    return decode_cards(o[ch]).astype(np.int64)


def ones(plane: np.ndarray) -> set[tuple[int, int]]:
    return {(int(r), int(k)) for r, k in zip(*np.nonzero(plane))}


def flat_index(plane: np.ndarray) -> int:
    idx = np.flatnonzero(plane.reshape(60))
    assert idx.size == 1, f"not one-hot: {idx}"
    return int(idx[0])


# ---------------------------------------------------------------------------- the fixed hand itself
def test_fixed_hand_script_is_playable():
    g = game_at(n_plays=len(PLAYS))
    assert g.landlord == 2 and g.bid == 2 and g.phase == Phase.PLAY
    assert g.current_player == 1 and g.last_move == 0  # two passes: seat 1 leads
    assert [s for s, _ in g.plays] == [s for s, _ in PLAYS]
    assert g.bombs == 1 and g.rockets == 1


def test_constants():
    assert NUM_CHANNELS == 29 and HISTORY == 15
    assert (CH_HAND, CH_UNSEEN, CH_BOTTOM, CH_PLAYED, CH_TO_BEAT, CH_HISTORY) == (0, 1, 2, 3, 6, 7)
    assert (CH_HISTORY_SEATS, CH_CARDS_LEFT, CH_BIDS, CH_DOUBLING, CH_STATUS) == (22, 23, 26, 27, 28)


def test_decode_cards_round_trip():
    for text in ("", "3", "33", "2222", "BR", "3456789TJQKA2BR", H0, H2):
        counts = parse_cards(text)
        plane = (np.arange(4)[:, None] < counts[None, :]).astype(np.int8)
        np.testing.assert_array_equal(decode_cards(plane), counts)


# ---------------------------------------------------------------------------- channel 0: hand
def test_hand_channel():
    g = game_at(n_bids=0)
    for seat, h in enumerate((H0, H1, H2)):
        np.testing.assert_array_equal(cards(obs(g, seat), CH_HAND), c(h))
    g = game_at(n_plays=0)  # bottom joined the landlord's hand (R7)
    np.testing.assert_array_equal(cards(obs(g, 2), CH_HAND), c(H2 + BOTTOM))
    np.testing.assert_array_equal(cards(obs(g, 0), CH_HAND), c(H0))
    g = game_at(n_plays=4)
    np.testing.assert_array_equal(cards(obs(g, 2), CH_HAND), c("89TJQKAA9BR"))
    np.testing.assert_array_equal(cards(obs(g, 0), CH_HAND), c("333445566778"))
    np.testing.assert_array_equal(cards(obs(g, 1), CH_HAND), c(H1))


# ---------------------------------------------------------------------------- channel 1: unseen
def test_unseen_channel_before_reveal():
    for g in (game_at(n_bids=0), game_at(n_bids=3, n_doubles=1)):
        for seat, h in enumerate((H0, H1, H2)):
            # deck minus own hand: the others' hands and the hidden bottom
            np.testing.assert_array_equal(cards(obs(g, seat), CH_UNSEEN), DECK - c(h))
        np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c(H1 + H2 + BOTTOM))


def test_unseen_channel_after_reveal_excludes_known_bottom():
    g = game_at(n_plays=0)
    np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c(H1 + H2))  # 9AR known in the landlord's hand
    np.testing.assert_array_equal(cards(obs(g, 1), CH_UNSEEN), c(H0 + H2))
    np.testing.assert_array_equal(cards(obs(g, 2), CH_UNSEEN), c(H0 + H1))
    g = game_at(n_plays=3)  # 34567 by seat 2, 45678 by seat 0
    np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c(H1 + "89TJQKA2222B"))
    np.testing.assert_array_equal(cards(obs(g, 1), CH_UNSEEN), c("333445566778" + "89TJQKA2222B"))
    np.testing.assert_array_equal(cards(obs(g, 2), CH_UNSEEN), c("333445566778" + H1))


def test_unseen_channel_after_landlord_plays_a_bottom_rank():
    # seat 2 played 99 (one 9 was a bottom card): the bottom 9 is no longer known to be held
    g = game_at(n_plays=7)
    lord_left = c("8TJQKAB")  # the landlord holds 8TJQKAAB R: one A and the R are the known bottom cards
    np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c(H1) + lord_left)
    np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c("8899TTTTJJJJQQQQKKKKAAAB"))
    np.testing.assert_array_equal(cards(obs(g, 1), CH_UNSEEN), c("333445566778") + lord_left)
    g = game_at(n_plays=10)  # the rocket: the bottom R is gone, only the A stays known
    np.testing.assert_array_equal(cards(obs(g, 0), CH_UNSEEN), c("899TJJJQQQKKKAA") + c("8TJQKA"))


# ---------------------------------------------------------------------------- channel 2: bottom
def test_bottom_channel():
    for g in (game_at(n_bids=0), game_at(n_bids=2), game_at(n_doubles=0), game_at(n_doubles=1),
              game_at(n_redouble=0)):
        for seat in range(3):
            assert not obs(g, seat)[CH_BOTTOM].any(), (g, seat)
    for n in (0, 7, 10, len(PLAYS)):  # revealed, and stays shown after the landlord plays bottom cards
        g = game_at(n_plays=n)
        for seat in range(3):
            np.testing.assert_array_equal(cards(obs(g, seat), CH_BOTTOM), c(BOTTOM))


def test_bottom_channel_without_redouble_phase():
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], 1)
    for x in BIDS + ["no double"]:
        g.step(action_from_string(x))
    assert not obs(g, 2)[CH_BOTTOM].any()
    g.step(action_from_string("no double"))
    assert g.phase == Phase.PLAY
    np.testing.assert_array_equal(cards(obs(g, 1), CH_BOTTOM), c(BOTTOM))


# ---------------------------------------------------------------------------- channels 3-5: played
def test_played_channels_by_relative_seat():
    g = game_at(n_plays=4)  # seat 2: 34567, 2222; seat 0: 45678; seat 1: nothing
    by_seat = {0: c("45678"), 1: c(""), 2: c("345672222")}
    for seat in range(3):
        o = obs(g, seat)
        for r in range(3):
            np.testing.assert_array_equal(cards(o, CH_PLAYED + r), by_seat[(seat + r) % 3], err_msg=f"{seat} {r}")
    o = obs(g, 1)
    np.testing.assert_array_equal(cards(o, 4), c("345672222"))  # next of seat 1 is seat 2
    np.testing.assert_array_equal(cards(o, 5), c("45678"))      # previous of seat 1 is seat 0
    g = game_at(n_plays=len(PLAYS))
    o = obs(g, 0)
    np.testing.assert_array_equal(cards(o, 3), c("45678"))
    np.testing.assert_array_equal(cards(o, 4), c("TT9A"))
    np.testing.assert_array_equal(cards(o, 5), c("34567222299BR8T"))


def test_played_channels_empty_before_play():
    g = game_at(n_plays=0)
    for seat in range(3):
        assert not obs(g, seat)[CH_PLAYED:CH_PLAYED + 3].any()


# ---------------------------------------------------------------------------- channel 6 + status row 2: move to beat
def test_move_to_beat_channel():
    for g in (game_at(n_bids=0), game_at(n_doubles=1), game_at(n_plays=0)):
        for seat in range(3):
            o = obs(g, seat)
            assert not o[CH_TO_BEAT].any() and not o[CH_STATUS, 2].any()
    g = game_at(n_plays=1)  # seat 2 led 34567, seat 0 to respond
    for seat in range(3):
        o = obs(g, seat)
        np.testing.assert_array_equal(cards(o, CH_TO_BEAT), c("34567"))
        assert ones(o[CH_STATUS, 2:3]) == {(0, (2 - seat) % 3)}
    g = game_at(n_plays=3)  # 45678 by seat 0, seat 1 passed: seat 2 must beat 45678
    o = obs(g, 2)
    np.testing.assert_array_equal(cards(o, CH_TO_BEAT), c("45678"))
    assert ones(o[CH_STATUS, 2:3]) == {(0, 1)}  # seat 0 is next of seat 2
    o = obs(g, 1)
    assert ones(o[CH_STATUS, 2:3]) == {(0, 2)}  # seat 0 is previous of seat 1
    g = game_at(n_plays=5)  # bomb by seat 2, seat 0 passed: seat 1 must beat 2222
    np.testing.assert_array_equal(cards(obs(g, 1), CH_TO_BEAT), c("2222"))
    assert ones(obs(g, 1)[CH_STATUS, 2:3]) == {(0, 1)}
    g = game_at(n_plays=6)  # two passes: seat 2 leads again
    for seat in range(3):
        o = obs(g, seat)
        assert not o[CH_TO_BEAT].any() and not o[CH_STATUS, 2].any()


# ---------------------------------------------------------------------------- channels 7-22: history
def test_history_channels_short():
    g = game_at(n_plays=4)  # most recent first: 2222 (seat 2), pass (seat 1), 45678 (seat 0), 34567 (seat 2)
    o = obs(g, 0)
    expected = ["2222", "", "45678", "34567"]
    for k in range(HISTORY):
        want = c(expected[k]) if k < len(expected) else c("")
        np.testing.assert_array_equal(cards(o, CH_HISTORY + k), want, err_msg=str(k))
    # seat 0's view: seat 2 is relative 2, seat 1 is relative 1
    assert ones(o[CH_HISTORY_SEATS]) == {(2, 0), (1, 1), (3, 1), (0, 2), (2, 3)}
    o = obs(g, 2)
    assert ones(o[CH_HISTORY_SEATS]) == {(0, 0), (2, 1), (3, 1), (1, 2), (0, 3)}


def test_history_channels_empty_before_play():
    for g in (game_at(n_bids=0), game_at(n_bids=3, n_doubles=1), game_at(n_plays=0)):
        for seat in range(3):
            assert not obs(g, seat)[CH_HISTORY:CH_HISTORY_SEATS + 1].any()


def test_history_channels_keep_the_last_15():
    g = game_at(n_plays=len(PLAYS))  # 20 plays; slots hold plays 20 .. 6
    o = obs(g, 1)
    # slot: (seat, move) = PLAYS[-1 - slot]
    expected_cards = {2: "A", 4: "T", 5: "9", 7: "8", 10: "BR", 11: "TT", 13: "99"}
    for k in range(HISTORY):
        np.testing.assert_array_equal(cards(o, CH_HISTORY + k), c(expected_cards.get(k, "")), err_msg=str(k))
    passes = {0, 1, 3, 6, 8, 9, 12, 14}
    assert {k for k in range(HISTORY) if o[CH_HISTORY_SEATS, 3, k]} == passes
    # seat 1's view: seat 1 -> 0, seat 2 -> 1, seat 0 -> 2
    seats = [0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1]  # absolute seat of each slot
    for k, s in enumerate(seats):
        col = o[CH_HISTORY_SEATS, :3, k]
        assert ones(col[:, None]) == {((s - 1) % 3, 0)}, k
    assert o[CH_HISTORY_SEATS].sum() == 15 + len(passes)
    # the bomb and the first two plays fell out of the window
    assert not any((cards(o, CH_HISTORY + k) == c("2222")).all() for k in range(HISTORY))


# ---------------------------------------------------------------------------- channels 23-25: cards left
def test_cards_left_channels():
    g = game_at(n_bids=0)
    for seat in range(3):
        o = obs(g, seat)
        assert [flat_index(o[CH_CARDS_LEFT + r]) for r in range(3)] == [17, 17, 17]
    g = game_at(n_plays=0)
    assert [flat_index(obs(g, 0)[CH_CARDS_LEFT + r]) for r in range(3)] == [17, 17, 20]  # self, seat 1, seat 2
    assert [flat_index(obs(g, 2)[CH_CARDS_LEFT + r]) for r in range(3)] == [20, 17, 17]
    assert obs(g, 2)[CH_CARDS_LEFT, 1, 5] == 1  # 20 = row 1, column 5
    g = game_at(n_plays=len(PLAYS))  # seat 0: 12, seat 1: 13, seat 2: 5
    assert [flat_index(obs(g, 0)[CH_CARDS_LEFT + r]) for r in range(3)] == [12, 13, 5]
    assert [flat_index(obs(g, 1)[CH_CARDS_LEFT + r]) for r in range(3)] == [13, 5, 12]
    assert [flat_index(obs(g, 2)[CH_CARDS_LEFT + r]) for r in range(3)] == [5, 12, 13]


def test_cards_left_zero_for_the_winner():
    g = Game.from_deal(["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "KAA", 0)
    for x in ["bid 3", "no double", "no double", "3", "2222", "pass", "pass", "BR", "pass", "pass",
              "3456789TJQK"]:
        g.step(action_from_string(x))
    assert g.is_over and g.winner == 1
    assert flat_index(obs(g, 1)[CH_CARDS_LEFT]) == 0
    assert flat_index(obs(g, 1)[CH_CARDS_LEFT + 2]) == 19  # the landlord (previous of seat 1) played 1 of 20
    assert flat_index(obs(g, 0)[CH_CARDS_LEFT]) == 19 and flat_index(obs(g, 0)[CH_CARDS_LEFT + 1]) == 0


# ---------------------------------------------------------------------------- channel 26: bids
def test_bids_channel():
    g = game_at(n_bids=0)  # only the first bidder (seat 1) is marked
    assert ones(obs(g, 0)[CH_BIDS]) == {(3, 1)}
    assert ones(obs(g, 1)[CH_BIDS]) == {(3, 0)}
    assert ones(obs(g, 2)[CH_BIDS]) == {(3, 2)}
    g = game_at(n_bids=2)  # seat 1 bid 1, seat 2 bid 2
    assert ones(obs(g, 0)[CH_BIDS]) == {(1, 1), (2, 2), (3, 1)}
    g = game_at(n_bids=3)  # seat 0 passed
    assert ones(obs(g, 0)[CH_BIDS]) == {(0, 0), (1, 1), (2, 2), (3, 1)}
    assert ones(obs(g, 1)[CH_BIDS]) == {(0, 1), (1, 2), (2, 0), (3, 0)}
    assert ones(obs(g, 2)[CH_BIDS]) == {(0, 2), (1, 0), (2, 1), (3, 2)}
    g = game_at(n_plays=len(PLAYS))  # bids stay visible during play
    assert ones(obs(g, 2)[CH_BIDS]) == {(0, 2), (1, 0), (2, 1), (3, 2)}


def test_bids_channel_bid_three_ends_bidding():
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], 0)
    g.step(action_from_string("bid 3"))
    assert g.landlord == 0
    assert ones(obs(g, 0)[CH_BIDS]) == {(0, 3), (3, 0)}  # the others never bid
    assert ones(obs(g, 1)[CH_BIDS]) == {(2, 3), (3, 2)}


# ---------------------------------------------------------------------------- channel 27: doubling
def test_doubling_channel():
    g = game_at(n_doubles=0)
    for seat in range(3):
        assert not obs(g, seat)[CH_DOUBLING].any()
    g = game_at(n_doubles=1)  # seat 0 doubled: only seat 0 knows (R5)
    assert ones(obs(g, 0)[CH_DOUBLING]) == {(0, 1)}
    assert not obs(g, 1)[CH_DOUBLING].any()
    assert not obs(g, 2)[CH_DOUBLING].any()
    g = game_at(n_redouble=0)  # seat 1 did not double: both revealed to all
    assert ones(obs(g, 0)[CH_DOUBLING]) == {(0, 1), (1, 0)}
    assert ones(obs(g, 1)[CH_DOUBLING]) == {(0, 0), (2, 1)}
    assert ones(obs(g, 2)[CH_DOUBLING]) == {(1, 1), (2, 0)}
    g = game_at(n_plays=0)  # the landlord did not redouble
    assert ones(obs(g, 0)[CH_DOUBLING]) == {(0, 1), (1, 0), (3, 0)}
    assert ones(obs(g, 2)[CH_DOUBLING]) == {(1, 1), (2, 0), (3, 0)}


def test_doubling_channel_redouble_and_no_doubles():
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], 1)
    for x in BIDS + ["no double", "double", "redouble"]:
        g.step(action_from_string(x))
    assert ones(obs(g, 1)[CH_DOUBLING]) == {(0, 1), (2, 0), (3, 1)}
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], 1)
    for x in BIDS + ["no double", "no double"]:
        g.step(action_from_string(x))
    assert g.phase == Phase.PLAY
    assert ones(obs(g, 2)[CH_DOUBLING]) == {(1, 0), (2, 0)}  # no redouble was asked (R6)


# ---------------------------------------------------------------------------- channel 28: status
def test_status_phase_and_role():
    cases = [
        (game_at(n_bids=0), Phase.BID, None),
        (game_at(n_bids=2), Phase.BID, None),
        (game_at(n_doubles=0), Phase.DOUBLE, (1, 2, 0)),
        (game_at(n_redouble=0), Phase.REDOUBLE, (1, 2, 0)),
        (game_at(n_plays=0), Phase.PLAY, (1, 2, 0)),
    ]
    for g, phase, roles in cases:
        for seat in range(3):
            o = obs(g, seat)
            assert ones(o[CH_STATUS, 0:1]) == {(0, int(phase))}
            if roles is None:
                assert not o[CH_STATUS, 1].any()
            else:  # seat 0 is the farmer after the landlord (1), seat 1 the one before (2)
                assert ones(o[CH_STATUS, 1:2]) == {(0, roles[seat])}
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], 0)
    for x in ("bid pass", "bid pass", "bid pass"):
        g.step(action_from_string(x))
    assert g.void
    for seat in range(3):
        o = obs(g, seat)
        assert ones(o[CH_STATUS, 0:1]) == {(0, 4)} and not o[CH_STATUS, 1].any()


def test_status_bombs_and_rocket():
    for n, bombs, rocket in ((0, 0, 0), (3, 0, 0), (4, 1, 0), (9, 1, 0), (10, 1, 1), (len(PLAYS), 1, 1)):
        g = game_at(n_plays=n)
        for seat in range(3):
            row = obs(g, seat)[CH_STATUS, 3]
            assert np.flatnonzero(row[:14]).tolist() == [bombs], n
            assert row[14] == rocket, n


def test_status_over_phase():
    g = Game.from_deal(["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"], "KAA", 0)
    for x in ["bid 3", "no double", "no double", "3", "2222", "pass", "pass", "BR", "pass", "pass",
              "3456789TJQK"]:
        g.step(action_from_string(x))
    for seat in range(3):
        o = obs(g, seat)
        assert o[CH_STATUS, 0, 4] == 1 and o[CH_STATUS, 0, :4].sum() == 0
        assert o[CH_STATUS, 3, 1] == 1 and o[CH_STATUS, 3, 14] == 1
        assert not o[CH_TO_BEAT].any()  # nothing to beat once the hand is over


def test_fixed_position_full_plane_count():
    # every 1 of a mid-play view is accounted for by the channel tests above
    g = game_at(n_plays=3)
    o = obs(g, 2)
    card_ones = sum(int(cards(o, ch).sum()) for ch in range(CH_HISTORY + HISTORY))
    assert card_ones == o[:CH_HISTORY + HISTORY].sum()
    assert o[CH_HISTORY_SEATS].sum() == 3 + 1
    assert o[CH_CARDS_LEFT:CH_CARDS_LEFT + 3].sum() == 3
    assert o[CH_BIDS].sum() == 4 and o[CH_DOUBLING].sum() == 3
    assert o[CH_STATUS].sum() == 4  # phase, role, beat seat, bombs 0


# ---------------------------------------------------------------------------- the env serves these planes
def test_env_observation_on_the_fixed_hand():
    e = ddz_env.raw_env()
    e.reset(options={"deal": DEAL})
    for x in BIDS + DOUBLES + REDOUBLE + [m for _, m in PLAYS[:5]]:
        e.step(action_from_string(x))
    g = game_at(n_plays=5)
    for seat in range(3):
        np.testing.assert_array_equal(e.observe(f"player_{seat}")["observation"], observe_game(g, seat))


# ---------------------------------------------------------------------------- random hands: properties
def _random_positions(n_games, seed, **kwargs):
    """Yields (game copy, seat) along random hands, every step and every seat."""
    rng = np.random.default_rng(seed)
    for i in range(n_games):
        g = Game.deal(seed * 1000 + i, **kwargs)
        while True:
            for seat in range(3):
                yield g, seat
            if g.is_over:
                break
            g.step(int(rng.choice(g.legal_actions())))


def test_thermometer_and_binary_on_random_hands():
    rows = np.arange(4)[:, None]
    n = 0
    for g, seat in _random_positions(40, 1):
        o = observe_game(g, seat)
        assert o.dtype == np.int8 and o.shape == OBS_SHAPE
        assert ((o == 0) | (o == 1)).all()
        planes = o[:CH_HISTORY + HISTORY]
        counts = planes.sum(axis=1)  # (22, 15)
        # thermometer: k cards light exactly rows 0..k-1
        np.testing.assert_array_equal(planes, (rows[None] < counts[:, None, :]).astype(np.int8))
        assert (counts[:, 13:] <= 1).all()  # one card of each joker
        n += 1
    assert n > 2000


def test_card_accounting_on_random_hands():
    for g, seat in _random_positions(40, 2):
        o = observe_game(g, seat)
        order = [seat, (seat + 1) % 3, (seat + 2) % 3]
        hand = cards(o, CH_HAND)
        np.testing.assert_array_equal(hand, g.hands[seat])
        played = [cards(o, CH_PLAYED + r) for r in range(3)]
        for r in range(3):
            np.testing.assert_array_equal(played[r], g.played[order[r]])
        left = [flat_index(o[CH_CARDS_LEFT + r]) for r in range(3)]
        assert left == [int(g.hands[s].sum()) for s in order]
        bottom = cards(o, CH_BOTTOM)
        lord_rel = (g.landlord - seat) % 3 if g.landlord >= 0 else -1
        if g.bottom_revealed:
            np.testing.assert_array_equal(bottom, g.bottom)
            known = np.maximum(bottom - played[lord_rel], 0) if lord_rel != 0 else 0 * bottom
        else:
            assert bottom.sum() == 0
            known = 0 * bottom
        unseen = cards(o, CH_UNSEEN)
        # the deck is own + unseen + played + the known bottom cards the landlord still holds
        np.testing.assert_array_equal(hand + unseen + sum(played) + known, DECK)
        hidden_bottom = 0 if g.bottom_revealed else 3
        assert unseen.sum() == left[1] + left[2] - known.sum() + hidden_bottom
        assert (unseen >= 0).all()


def test_history_matches_game_plays_on_random_hands():
    for g, seat in _random_positions(25, 3):
        o = observe_game(g, seat)
        recent = g.plays[-HISTORY:][::-1]
        for k in range(HISTORY):
            if k < len(recent):
                s, m = recent[k]
                np.testing.assert_array_equal(cards(o, CH_HISTORY + k), MOVE_COUNTS[m])
                assert o[CH_HISTORY_SEATS, (s - seat) % 3, k] == 1
                assert o[CH_HISTORY_SEATS, :3, k].sum() == 1
                assert o[CH_HISTORY_SEATS, 3, k] == int(m == 0)
            else:
                assert not o[CH_HISTORY + k].any() and not o[CH_HISTORY_SEATS, :, k].any()


def test_status_counts_on_random_hands():
    seen_bombs = 0
    for g, seat in _random_positions(60, 4):
        o = observe_game(g, seat)
        row = o[CH_STATUS, 3]
        assert np.flatnonzero(row[:14]).tolist() == [min(g.bombs, 13)]
        assert row[14] == int(g.rockets > 0)
        seen_bombs = max(seen_bombs, g.bombs)
        assert o[CH_STATUS, 0].sum() == 1 and o[CH_STATUS, 0, int(g.phase)] == 1
    assert seen_bombs >= 1


# ---------------------------------------------------------------------------- batched encode == observe_game
def _encode_inputs(g: Game, seat: int) -> dict:
    order = [seat, (seat + 1) % 3, (seat + 2) % 3]
    lord = g.landlord
    hand = g.hands[seat].astype(np.int64)
    bottom = g.bottom.astype(np.int64) if g.bottom_revealed else np.zeros(15, np.int64)
    known = np.maximum(bottom - g.played[lord], 0) if g.bottom_revealed and lord != seat else 0
    unseen = DECK - hand - g.played.sum(axis=0) - known
    playing = g.phase == Phase.PLAY
    to_beat = MOVE_COUNTS[g.last_move].astype(np.int64) if playing and g.last_move else np.zeros(15, np.int64)
    K = HISTORY
    hist_cards = np.zeros((K, 15), np.int64)
    hist_seat = np.full(K, -1, np.int64)
    hist_pass = np.zeros(K, bool)
    for k, (s, m) in enumerate(g.plays[-K:][::-1]):
        hist_cards[k] = MOVE_COUNTS[m]
        hist_seat[k] = (s - seat) % 3
        hist_pass[k] = m == 0
    doubling = np.full(3, -1, np.int64)
    for r, s in enumerate(order):
        if s != lord and (g.doubles_revealed or s == seat):
            doubling[r] = g.double_choice[s]
    return dict(
        hand=hand, unseen=unseen, bottom=bottom, played=g.played[order].astype(np.int64), to_beat=to_beat,
        hist_cards=hist_cards, hist_seat=hist_seat, hist_pass=hist_pass,
        cards_left=g.hands[order].sum(axis=1).astype(np.int64), bids=g.bids[order].astype(np.int64),
        first_bidder=np.int64((g.first_bidder - seat) % 3), doubling=doubling,
        redouble=np.int64(g.redouble_choice), phase=np.int64(int(g.phase)),
        role=np.int64((seat - lord) % 3 if lord >= 0 else -1),
        beat_seat=np.int64((g.last_mover - seat) % 3 if to_beat.any() else -1),
        bombs=np.int64(g.bombs), rocket=np.bool_(g.rockets > 0),
    )


def test_encode_batched_equals_observe_game():
    inputs, expected = [], []
    for i, (g, seat) in enumerate(_random_positions(8, 5)):
        if i % 7 == 0:
            inputs.append(_encode_inputs(g, seat))
            expected.append(observe_game(g, seat))
    # the fixed hand at several points too
    for n in (0, 1, 4, len(PLAYS)):
        g = game_at(n_plays=n)
        for seat in range(3):
            inputs.append(_encode_inputs(g, seat))
            expected.append(observe_game(g, seat))
    for seat in range(3):
        g = game_at(n_doubles=1)
        inputs.append(_encode_inputs(g, seat))
        expected.append(observe_game(g, seat))
    batch = {k: np.stack([d[k] for d in inputs]) for k in inputs[0]}
    out = encode(PublicView(**batch))
    assert out.shape == (len(inputs),) + OBS_SHAPE and out.dtype == np.int8
    for i in range(len(inputs)):
        np.testing.assert_array_equal(out[i], expected[i], err_msg=str(i))
    assert len(inputs) > 60


# --------------------------------------------------------------------------- input validation (issue 12)
def test_observe_game_rejects_seats_that_are_not_0_1_2():
    """observe_game(g, -1) was seat 2's hand under seat -1's relative order."""
    g = Game.from_deal(DEAL["hands"], DEAL["bottom"], DEAL["first_bidder"])
    for bad in (-1, 3, 1.0, 1.5, "1", None):
        with pytest.raises(ValueError, match=r"seat must be 0, 1 or 2, got " + re.escape(repr(bad))):
            observe_game(g, bad)
    np.testing.assert_array_equal(observe_game(g, np.int64(2)), observe_game(g, 2))


def test_layout_is_one_table_and_every_copy_matches_it():
    """LAYOUT is the one source: contiguous channels, the CH_* constants from it, README's table and
    this module's doc page generated from it, named views that slice the right channels (issue 13)."""

    from ddz_env import observation as ob

    stops = [0] + [c.stop for c in ob.LAYOUT]
    assert [c.start for c in ob.LAYOUT] == stops[:-1] and stops[-1] == ob.NUM_CHANNELS == 29
    assert (ob.CH_HAND, ob.CH_PLAYED, ob.CH_TO_BEAT, ob.CH_HISTORY, ob.CH_CARDS_LEFT, ob.CH_STATUS) == (0, 3, 6, 7, 23, 28)
    from common import docs_text

    readme = docs_text()
    assert ob.layout_table("markdown") in readme, "README's observation table differs from LAYOUT: paste layout_table()"
    assert ob.layout_table("rst") in ob.__doc__
    g = Game.deal(3)
    planes = observe_game(g, g.current_player)
    hand = ob.LAYOUT_BY_NAME["hand"].of(planes)
    assert hand.shape == (1, 4, 15) and decode_cards(hand[0]).tolist() == g.hands[g.current_player].tolist()
    assert ob.LAYOUT_BY_NAME["cards_left"].of(planes[None]).shape == (1, 3, 4, 15)


# --------------------------------------------------------------------------- readers through the layout (issue 23)
@pytest.mark.parametrize("rules", ["rulebook", "douzero"])
def test_readers_invert_the_planes_on_many_random_states(rules):
    """read_status inverts the status plane, and read_cards / read_cards_left / read_bids / read_doubling
    their channels, at every step of random hands for every seat (R5: the doubling as the seat may know it);
    on a batch of planes they give the same as one by one."""
    from ddz_env.readers import read_bids, read_cards, read_cards_left, read_doubling, read_status

    rng = np.random.default_rng(11)
    planes_all, want_phase = [], []
    seen_phases, seen_beat, seen_bombs = set(), set(), 0
    for seed in range(25 if rules == "rulebook" else 12):
        g = Game.deal(seed, rules=rules)
        while True:
            for seat in range(3):
                planes = observe_game(g, seat)
                order = [seat, (seat + 1) % 3, (seat + 2) % 3]
                st = read_status(planes)
                last = g.last_move if g.phase == Phase.PLAY else 0
                assert int(st.phase) == int(g.phase) and int(st.role) == g.role(seat)
                assert int(st.beat_seat) == ((g.last_mover - seat) % 3 if last else -1)
                assert int(st.bombs) == min(g.bombs, 13) and bool(st.rocket) == (g.rockets > 0)
                assert read_cards(planes, "hand").tolist() == g.hands[seat].tolist()
                assert read_cards(planes, "played").tolist() == g.played[order].tolist()
                assert read_cards(planes, "bottom").tolist() == (g.bottom * g.bottom_revealed).tolist()
                assert read_cards(planes, "to_beat").tolist() == (MOVE_COUNTS[last] if last else 0 * g.bottom).tolist()
                assert read_cards_left(planes).tolist() == [g.n_cards[s] for s in order]
                bids, first = read_bids(planes)
                assert bids.tolist() == g.bids[order].tolist() and int(first) == (g.first_bidder - seat) % 3
                dbl, red = read_doubling(planes)
                shown = [int(g.double_choice[s]) if (g.doubles_revealed or s == seat) else -1 for s in order]
                assert dbl.tolist() == shown and int(red) == g.redouble_choice
                planes_all.append(planes)
                want_phase.append(int(g.phase))
                seen_phases.add(int(g.phase))
                seen_beat.add(int(st.beat_seat))
                seen_bombs += g.bombs > 0
            if g.is_over:
                break
            la = g.legal_actions()
            g.step(int(la[rng.integers(la.size)]))
    batch = np.stack(planes_all)
    st = read_status(batch)
    assert st.phase.tolist() == want_phase and st.phase.shape == (len(planes_all),)
    assert read_cards(batch, "history").shape == (len(planes_all), HISTORY, 15)
    assert seen_beat == {-1, 0, 1, 2} and seen_bombs
    assert seen_phases >= ({0, 1, 2, 3, 4} if rules == "rulebook" else {3, 4}), seen_phases
    with pytest.raises(ValueError, match="'status' is no card channel"):
        read_cards(batch, "status")


def test_readers_on_the_batched_env_and_flat_cells():
    """The readers read the batched env's planes too; Channels.cells is the run's cells in flat planes."""
    from ddz_env.observation import LAYOUT_BY_NAME
    from ddz_env.readers import read_cards, read_status
    from ddz_env.vector import VectorDouDizhu

    vec = VectorDouDizhu(64, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        vec.step(vec.random_actions(rng), observe=False)
    planes = vec.observe()
    st = read_status(planes)
    np.testing.assert_array_equal(st.phase, vec.phase)
    np.testing.assert_array_equal(st.role, vec.roles())
    own = vec.hands[np.arange(64), vec.current_player]
    np.testing.assert_array_equal(read_cards(planes, "hand"), own)
    flat = planes.reshape(64, -1)
    np.testing.assert_array_equal(flat[:, LAYOUT_BY_NAME["hand"].cells].reshape(64, 4, 15).sum(1), own)
    assert LAYOUT_BY_NAME["status"].cells == slice(28 * 60, 29 * 60)


def test_r5_public_history_hides_each_doubling_choice_until_both_are_made():
    """R5: observation.public_history (the one place of the ruling for history lists) shows HIDDEN for
    every double / no-double until both farmers chose, then everything; other actions always."""
    from ddz_env.actions import BID_PASS, DOUBLE, NO_DOUBLE
    from ddz_env.observation import HIDDEN, public_history

    hist = [(0, BID_PASS + 3), (1, DOUBLE)]
    assert public_history(hist, False) == [(0, BID_PASS + 3), (1, HIDDEN)]
    both = hist + [(2, NO_DOUBLE)]
    assert public_history(both, True) == both and public_history(both, False)[1:] == [(1, HIDDEN), (2, HIDDEN)]
    assert public_history(both, True) is not both  # a copy: the caller's list is never handed out
