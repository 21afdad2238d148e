"""The exact endgame solver (ddz_env/endgame.py) against a plain full-width minimax, and its principal
line played through the referee (``Game``).

The brute force below shares nothing with the solver but the project's legality (``legal.legal_ids``)
and scoring (``scoring.finish_hand``): no table, no pruning, no unit value; it plays each line to the
end and asks the scoring for the landlord's R19 score, which the landlord maximises and the farmers
minimise (both farmers' scores are negative multiples of it, R19)."""
from __future__ import annotations

import numpy as np
import pytest

from ddz_env import endgame as E
from ddz_env.cards import MAX_COUNTS, NUM_RANKS, as_counts
from ddz_env.game import Game, IllegalActionError
from ddz_env.legal import legal_ids
from ddz_env.moves import IS_BOMB, IS_ROCKET, MOVE_COUNTS, MOVE_NCARDS, PASS, move_id
from ddz_env.rules import Phase
from ddz_env.scoring import finish_hand


# ---------------------------------------------------------------------------------------- brute force
class TooBig(Exception):
    """The plain minimax's tree is over its budget (the test draws another position)."""


def brute(p: E.Position, budget: int | None = None, memo: bool = False) -> int:
    """The landlord's final R19 score under best play, by plain minimax over every legal line: no pruning;
    with ``memo``, each full state (hands, turn, move to beat, passes, plays made up to 2 a seat: R18 asks
    only whether they are 0 or 1, bombs) is valued once (the same full-width values, for larger positions); ``budget``: raise TooBig past that many nodes."""
    lord = p.landlord
    made0 = np.zeros(3, np.int64)
    made0[lord] = p.landlord_moves
    if p.farmers_played:
        made0[(lord + 1) % 3] = 1
    doubled = np.array(p.doubled)
    seen: dict = {}
    nodes = [0]

    def rec(hands, turn, last, passes, made, bombs, rockets) -> int:
        key = (hands.tobytes(), turn, last, passes, np.minimum(made, 2).tobytes(), bombs, rockets) if memo else None
        if memo and key in seen:
            return seen[key]
        nodes[0] += 1
        if budget is not None and nodes[0] > budget:
            raise TooBig
        vals = []
        for m in legal_ids(hands[turn], last).tolist():
            nxt = (turn + 1) % 3
            if m == PASS:
                two = passes == 1
                vals.append(rec(hands, nxt, PASS if two else last, 0 if two else 1, made, bombs, rockets))
                continue
            h = hands.copy()
            h[turn] -= MOVE_COUNTS[m]
            mm = made.copy()
            mm[turn] += 1
            b, r = bombs + int(IS_BOMB[m]), rockets + int(IS_ROCKET[m])
            if h[turn].sum() == 0:
                scores = finish_hand(turn, lord, mm, p.bid, doubled, p.redoubled, b, r)[3]
                vals.append(int(scores[lord]))
            else:
                vals.append(rec(h, nxt, m, 0, mm, b, r))
        v = max(vals) if turn == lord else min(vals)
        if memo:
            seen[key] = v
        return v

    return rec(p.hands.copy(), p.turn, p.last_move, p.passes, made0, p.bombs, 0)


def random_position(rng: np.random.Generator, lo: int = 2, hi: int = 5) -> E.Position:
    """Hands of lo..hi cards from one deck, often with a bomb or the rocket planted; a lead or a move to
    beat made of cards out of the hands; random stakes and spring flags."""
    deck = MAX_COUNTS.astype(np.int64).copy()
    hands = np.zeros((3, NUM_RANKS), np.int64)
    sizes = rng.integers(lo, hi + 1, size=3)
    for s in range(3):
        if rng.random() < 0.3 and sizes[s] >= 4:  # a bomb (R15), or the rocket
            if rng.random() < 0.25 and deck[13] and deck[14]:
                hands[s, 13] = hands[s, 14] = 1
            else:
                r = int(rng.choice(np.flatnonzero(deck[:13] == 4)))
                hands[s, r] = 4
            deck -= hands[s]
        while hands[s].sum() < sizes[s]:
            r = int(rng.choice(np.flatnonzero(deck), p=deck[deck > 0] / deck.sum()))
            hands[s, r] += 1
            deck[r] -= 1
    lord = int(rng.integers(3))
    turn = int(rng.integers(3))
    last, passes = PASS, 0
    if rng.random() < 0.6:  # respond to a move made of cards already played
        ids = legal_ids(deck, PASS)
        ids = ids[MOVE_NCARDS[ids] <= 4]
        last = int(rng.choice(ids))
        passes = int(rng.integers(2))
    fp = bool(rng.random() < 0.7)
    lm = int(rng.integers(1, 3))
    doubled = [bool(rng.random() < 0.5) for _ in range(3)]
    doubled[lord] = False
    return E.Position(hands, lord, turn, last, passes, fp, lm, int(rng.integers(1, 4)), tuple(doubled),
                      bool(rng.random() < 0.5), int(rng.integers(3)))


def test_solver_matches_brute_force_on_random_small_positions():
    """R8-R19: on 200 seeded positions of 2-4 cards a hand (bombs, the rocket, leads and responses, springs
    possible or not; those whose plain tree exceeds 2,000 nodes are drawn again), the solver's scores equal
    the plain minimax's, for every seat and after every move."""
    rng = np.random.default_rng(7)
    bombs = checked = 0
    while checked < 200:
        p = random_position(rng, 2, 4)
        try:
            want = brute(p, budget=2_000)
        except TooBig:
            continue
        checked += 1
        i = checked
        bombs += int(((p.hands[:, :13] == 4).any() or (p.hands[:, 13:] == 1).all(axis=1).any()))
        scores = E.solve_scores(p)
        assert scores[p.landlord] == want, (i, p)
        assert scores.sum() == 0
        sol = E.solve(p)
        assert sol.value == scores[p.turn], (i, p)
        values = E.move_values(p)
        assert sol.move in values and values[sol.move] == sol.value
        assert sol.value == max(values.values())  # no move of the seat on turn does better for it
    assert bombs > 30  # the draw planted bombs and rockets often enough to test R18's doubling


def test_solver_matches_memoised_full_width_minimax_at_four_to_six_cards_a_hand():
    """The same at 4-6 cards a hand (12-18 cards in all), the full-width values memoised per full state
    (those over 8,000 states are drawn again)."""
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 6:
        p = random_position(rng, 4, 6)
        try:
            want = brute(p, budget=8_000, memo=True)
        except TooBig:
            continue
        checked += 1
        assert E.solve_scores(p, max_cards=21)[p.landlord] == want, p


# ---------------------------------------------------------------------------------------- the referee
def self_play_games(n: int, total: int, seed: int, rules: str = "rulebook") -> list[Game]:
    """Games of random play (random bids and doubles too) stopped at the first play-phase position with at
    most ``total`` cards in the hands."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        g = Game.deal(int(rng.integers(1 << 30)), rules=rules)
        while not g.is_over and not (g.phase == Phase.PLAY and g.hands.sum() <= total):
            g.step(int(rng.choice(g.legal_actions())))
        if not g.is_over:
            out.append(g)
    return out


def test_principal_line_through_the_referee_scores_what_the_solver_said():
    """The solver's best moves, played by every seat through ``Game``, end the hand with the scores
    ``solve_scores`` predicted at the start (R17-R19: the referee's spring flags, bombs and stakes)."""
    for g in self_play_games(40, 12, seed=3):
        predicted = E.solve_scores(g)
        start = E.solve(g).value
        seat = g.current_player
        while not g.is_over:
            g.step(E.solve(g).move)
        assert g.scores.tolist() == predicted.tolist()
        assert g.scores[seat] == start


def test_principal_line_with_bombs_doubles_the_stake_r18_r19():
    """R18/R19: positions where a bomb or the rocket is still held; the line through the referee scores
    what the solver said, bombs played on it doubling the stake."""
    rng = np.random.default_rng(5)
    tried = doubled = 0
    while tried < 20:
        p = random_position(rng, 3, 5)
        if not ((p.hands[:, :13] == 4).any() or (p.hands[:, 13:] == 1).all(axis=1).any()):
            continue
        try:
            want = brute(p, budget=5_000, memo=True)
        except TooBig:
            continue
        tried += 1
        predicted = E.solve_scores(p)
        assert predicted[p.landlord] == want
        # play the line in the solver's own position model and count the bombs it plays
        q, bombs = p, 0
        while True:
            m = E.solve(q).move
            bombs += int(IS_BOMB[m] or IS_ROCKET[m])
            if MOVE_NCARDS[m] == q.hands[q.turn].sum():
                break
            q = q.after(m)
        doubled += bombs > 0
        unit = E.unit_value(p)
        assert abs(unit).bit_length() - 1 >= bombs  # every bomb on the line doubled the unit once
    assert doubled > 0


def test_spring_r18_landlord_goes_out_before_any_farmer_plays():
    """R18 spring: the landlord leads its last two moves and no farmer ever played: the stake doubles."""
    hands = np.stack([as_counts("AA"), as_counts("3"), as_counts("4")])
    p = E.Position(hands, landlord=0, turn=0, last_move=PASS, passes=0, farmers_played=False, landlord_moves=1)
    assert E.unit_value(p) == 2  # the landlord wins, doubled once by spring
    assert E.solve(p) == E.Solution(4, move_id("AA"))  # 2 from each farmer (R19); going out at once
    q = E.Position(hands, 0, 0, PASS, 0, True, 1)
    assert E.unit_value(q) == 1  # a farmer played before: no spring
    assert E.solve_scores(p).tolist() == [4, -2, -2]


def test_anti_spring_r18_farmers_win_after_the_landlords_opening_only():
    """R18 anti-spring: a farmer goes out and the landlord made only its opening play: doubled."""
    hands = np.stack([as_counts("3"), as_counts("22"), as_counts("4")])
    p = E.Position(hands, landlord=0, turn=1, last_move=PASS, passes=0, farmers_played=True, landlord_moves=1)
    assert E.unit_value(p) == -2
    assert E.solve_scores(p).tolist() == [-4, 2, 2]
    assert E.unit_value(E.Position(hands, 0, 1, PASS, 0, True, 2)) == -1


def test_bomb_held_to_double_before_going_out_r18():
    """R18: with a bomb and a single the landlord plays the bomb first (nobody can beat it), then goes out
    with the single: the bomb doubles the stake once (2 units); the single first loses to a farmer's 5."""
    hands = np.stack([as_counts("33334"), as_counts("5"), as_counts("6")])
    p = E.Position(hands, 0, 0, PASS, 0, True, 2)
    # 33334 is no move (a four takes two kickers, R13)
    assert E.unit_value(p) == 2
    assert E.solve(p).move == move_id("3333")


def test_farmer_passes_to_let_the_partner_win():
    """Teamwork (R17: a farmer going out wins for both): farmer 1 could beat its partner's 7 with an 8 and
    keep the lead, but then it must lead into the landlord; passing lets farmer 2 lead its last card."""
    # landlord 0: 2 + J; farmer 1: 8 + 4; farmer 2 led a 7 and holds one card, a 5.
    hands = np.stack([as_counts("2J"), as_counts("84"), as_counts("5")])
    # seat 2 played 7, landlord passed; seat 1 to respond (passes = 1)
    p = E.Position(hands, landlord=0, turn=1, last_move=move_id("7"), passes=1, farmers_played=True,
                   landlord_moves=2)
    values = E.move_values(p)
    assert values[PASS] > 0 > values[move_id("8")]  # passing wins for the farmers; the 8 loses
    assert E.solve(p).move == PASS
    assert brute(p) == E.solve_scores(p)[0] < 0


# ---------------------------------------------------------------------------------------- bad input
def test_bad_positions_name_what_is_wrong():
    good = np.stack([as_counts("3"), as_counts("4"), as_counts("5")])
    cases = [
        (dict(hands=good[:2]), "shape"),
        (dict(hands=np.stack([as_counts("3"), as_counts(""), as_counts("5")])), "holds no card"),
        (dict(hands=np.stack([as_counts("33"), as_counts("33"), as_counts("3")])), "more than one deck"),
        (dict(landlord=3), "landlord must be a seat"),
        (dict(turn=-1), "turn must be a seat"),
        (dict(last_move=10**6), "last_move"),
        (dict(last_move=move_id("7"), passes=2), "passes"),
        (dict(passes=1), "passes"),
        (dict(bid=0), "bid"),
        (dict(doubled=(True, False, False)), "doubled"),
        (dict(landlord_moves=0, turn=1), "landlord_moves 0"),
        (dict(bombs=-1), "bombs"),
    ]
    for change, words in cases:
        args = dict(hands=good, landlord=0, turn=0)
        args.update(change)
        with pytest.raises(ValueError, match=words):
            E.Position(**args)
    with pytest.raises(TypeError, match="integer"):
        E.Position(good.astype(float), 0, 0)


def test_errors_leave_the_game_unchanged():
    """A game outside the play phase, too many cards, an illegal move: ValueError naming it; the game
    (and a solved one) is never changed."""
    g = Game.deal(1)
    with pytest.raises(ValueError, match="play phase"):
        E.solve(g)
    assert g.phase == Phase.BID and not g.history
    g = self_play_games(1, 30, seed=1, rules="douzero")[0]
    before = (g.hands.copy(), g.current_player, g.last_move, g.passes, list(g.plays), g.moves_made.copy())
    with pytest.raises(ValueError, match="max_cards"):
        E.solve(g, max_cards=10)
    assert not E.solvable(g, 10) and E.solvable(g, 30)
    g = self_play_games(1, 10, seed=2)[0]
    before = (g.hands.copy(), g.current_player, g.last_move, g.passes, list(g.plays), g.moves_made.copy())
    E.solve(g)
    E.move_values(g)
    with pytest.raises(ValueError, match="not legal"):
        E.move_values(g, [10**4])
    after = (g.hands, g.current_player, g.last_move, g.passes, g.plays, g.moves_made)
    for x, y in zip(before, after):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    with pytest.raises(TypeError, match="Position"):
        E.solve("3 4 5")
    with pytest.raises(IllegalActionError):  # (the game still referees its own moves)
        g.step(10**4)


def test_move_cache_agrees_with_the_project_legality():
    """The solver's remembered move lists are exactly ``legal.legal_ids`` (R8-R16), in search order."""
    rng = np.random.default_rng(2)
    for _ in range(200):
        p = random_position(rng, 1, 8)
        h = E._code(p.hands[p.turn])
        got = sorted(m for m, *_ in E._moves(h, p.last_move))
        assert got == legal_ids(p.hands[p.turn], p.last_move).tolist()
        assert np.array_equal(E._counts(h), p.hands[p.turn])
