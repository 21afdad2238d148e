"""Cards, card strings and dealing (R1, R2)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddz_env.cards import RANKS, as_counts, card_name, deal, parse_cards, to_string

FULL_DECK = "3333444455556666777788889999TTTTJJJJQQQQKKKKAAAA2222BR"


# --- R1: the deck, the ranks and their order

def test_r1_ranks_low_to_high():
    assert RANKS == "3456789TJQKA2BR"
    assert len(RANKS) == 15 and len(set(RANKS)) == 15


def test_r1_deck_has_54_cards_four_of_each_rank_and_one_of_each_joker():
    counts = parse_cards(FULL_DECK)
    assert counts.shape == (15,)
    assert int(counts.sum()) == 54
    assert counts.tolist() == [4] * 13 + [1, 1]
    assert to_string(counts) == FULL_DECK


def test_r1_a_54_card_deck_holds_no_55th_card():
    for extra in "3456789TJQKA2BR":
        with pytest.raises(ValueError):
            parse_cards(FULL_DECK + extra)


@pytest.mark.parametrize("seed", range(40))
def test_r1_deal_gives_17_17_17_and_3_bottom_cards_from_one_deck(seed):
    hands, bottom = deal(seed)
    assert hands.shape == (3, 15)
    assert bottom.shape == (15,)
    assert hands.sum(axis=1).tolist() == [17, 17, 17]
    assert int(bottom.sum()) == 3
    assert (hands >= 0).all() and (bottom >= 0).all()
    # every card of the deck is dealt exactly once
    assert (hands.sum(axis=0) + bottom).tolist() == [4] * 13 + [1, 1]


def test_r1_deal_is_reproducible_from_a_seed():
    h1, b1 = deal(1234)
    h2, b2 = deal(1234)
    np.testing.assert_array_equal(h1, h2)
    np.testing.assert_array_equal(b1, b2)
    h3, b3 = deal(np.random.default_rng(1234))
    np.testing.assert_array_equal(h1, h3)
    np.testing.assert_array_equal(b1, b3)


def test_r1_different_seeds_give_different_deals():
    deals = {tuple(np.concatenate([h.ravel(), b]).tolist()) for h, b in (deal(s) for s in range(50))}
    assert len(deals) == 50


def test_r1_deal_is_a_fair_shuffle_roughly():
    # each of the 54 cards is equally likely in the bottom: over 3000 deals every rank of 3..2
    # should appear about 3000 * 3 * 4 / 54 = 667 times, each joker about 167 times
    total = np.zeros(15)
    seat0 = np.zeros(15)
    for s in range(3000):
        hands, bottom = deal(s)
        total += bottom
        seat0 += hands[0]
    expected_bottom = 3000 * 3 * np.array([4] * 13 + [1, 1]) / 54
    assert np.all(np.abs(total - expected_bottom) < 5 * np.sqrt(expected_bottom))
    expected_seat = 3000 * 17 * np.array([4] * 13 + [1, 1]) / 54
    assert np.all(np.abs(seat0 - expected_seat) < 5 * np.sqrt(expected_seat))


# --- R2: two jokers, two ranks, together the rocket, never a pair

def test_r2_jokers_are_two_different_ranks():
    assert parse_cards("B").tolist() == [0] * 13 + [1, 0]
    assert parse_cards("R").tolist() == [0] * 13 + [0, 1]
    assert parse_cards("BR").tolist() == [0] * 13 + [1, 1]
    assert RANKS.index("B") < RANKS.index("R")


@pytest.mark.parametrize("text", ["BB", "RR", "BBR", "BRR", "33BB"])
def test_r2_there_is_only_one_joker_of_each_colour(text):
    # "BB" is no hand at all (one black joker in the deck): jokers never make a pair
    with pytest.raises(ValueError) as err:
        parse_cards(text)
    assert repr(text) in str(err.value)


# --- card strings

@pytest.mark.parametrize(
    "text, canonical",
    [
        ("33344456", "33344456"),
        ("65434433", "33344456"),
        ("RB", "BR"),
        ("2A3", "3A2"),
        ("tjqka", "TJQKA"),
        ("br", "BR"),
        ("10 J Q K A", "TJQKA"),
        ("1010", "TT"),
        ("  3 3  ", "33"),
        ("", ""),
        ("T10t", "TTT"),
    ],
)
def test_parse_accepts_any_order_lowercase_and_10(text, canonical):
    assert to_string(parse_cards(text)) == canonical


def test_parse_returns_int8_counts():
    counts = parse_cards("3334")
    assert counts.dtype == np.int8
    assert counts.tolist() == [3, 1] + [0] * 13


@pytest.mark.parametrize("text, bad", [("33X", "X"), ("1", "1"), ("0", "0"), ("34 5Z", "Z"), ("3-4", "-"), ("11", "1")])
def test_parse_rejects_unknown_characters_naming_the_input(text, bad):
    with pytest.raises(ValueError) as err:
        parse_cards(text)
    assert repr(text) in str(err.value)
    assert bad in str(err.value)


@pytest.mark.parametrize("text", ["77777", "3333 3", "22222", "AAAAA"])
def test_parse_rejects_five_of_a_rank_naming_the_input(text):
    with pytest.raises(ValueError) as err:
        parse_cards(text)
    assert repr(text) in str(err.value)


def test_parse_rejects_non_strings():
    with pytest.raises(TypeError):
        parse_cards(None)
    with pytest.raises(TypeError):
        parse_cards(["3", "4"])


def test_to_string_is_canonical_low_to_high():
    counts = np.zeros(15, dtype=np.int8)
    counts[[14, 0, 12, 8]] = [1, 2, 4, 3]
    assert to_string(counts) == "33JJJ2222R"


@st.composite
def count_vectors(draw):
    return np.array([draw(st.integers(0, 4)) for _ in range(13)] + [draw(st.integers(0, 1)) for _ in range(2)],
                    dtype=np.int8)


@settings(max_examples=300)
@given(count_vectors(), st.randoms(use_true_random=False))
def test_to_string_parse_round_trip(counts, rnd):
    text = to_string(counts)
    assert len(text) == int(counts.sum())
    np.testing.assert_array_equal(parse_cards(text), counts)
    shuffled = list(text)
    rnd.shuffle(shuffled)
    np.testing.assert_array_equal(parse_cards("".join(shuffled).lower()), counts)
    assert to_string(parse_cards("".join(shuffled))) == text


# --------------------------------------------------------------------------- input validation (issue 12)
def _counts(**at) -> np.ndarray:
    c = np.zeros(15)
    for rank, v in at.items():
        c[RANKS.index(rank[-1])] = v
    return c


@pytest.mark.parametrize("bad,shown", [
    (_counts(r3=2.9), "2.9"), (_counts(r4=np.nan), "nan"), (_counts(r5=np.inf), "inf"), (_counts(r3=-0.5), "-0.5"),
], ids=["2.9-threes", "nan", "inf", "negative-fraction"])
def test_count_vectors_must_hold_whole_finite_numbers(bad, shown):
    """as_counts is where every count vector is read: 2.9 threes are no pair, NaN no card."""
    with pytest.raises(ValueError, match=f"whole numbers, got {shown}") as err:
        as_counts(bad)
    assert "rank" in str(err.value)
    with pytest.raises(ValueError, match="whole numbers"):
        to_string(bad)  # was '33' for 2.9 threes


def test_count_vectors_of_whole_floats_ints_and_bools_still_read():
    np.testing.assert_array_equal(as_counts(_counts(r3=2.0, r2=4.0)), parse_cards("332222"))
    assert as_counts(np.array([1] * 15, dtype=np.uint8)).dtype == np.int8
    assert to_string(np.array([True] + [False] * 14)) == "3"
    assert to_string([0, 2] + [0] * 13) == "44"


def test_non_numeric_count_vectors_raise_type_error():
    with pytest.raises(TypeError, match="must be integers"):
        as_counts(np.array(["1"] * 15))
    with pytest.raises(TypeError, match="must be integers"):
        as_counts([None] * 15)


def test_card_name_rejects_negative_and_float_ids():
    assert card_name(0) == "3s" and card_name(53) == "R" and card_name(np.int64(52)) == "B"
    for bad in (-1, -54, 54):
        with pytest.raises(ValueError, match=rf"card id {bad} out of range"):
            card_name(bad)  # -1 was the red joker
    for bad in (1.5, 0.0, "3"):
        with pytest.raises(TypeError, match=re.escape(repr(bad))):
            card_name(bad)
