"""The batched env (ddz_env.vector) against the scalar rules core and the AEC env.

The core check: for many seeds, B hands of ``VectorDouDizhu`` and B scalar
``Game`` objects built from the same deals, fed the same actions, give identical
observations (``observe_game``), legal sets, current players, phases, rewards,
ends and scores, hand by hand and step by step. Per-hand policies steer the hands
into every corner: all-pass bidding (void hands, R4), doubling and redouble (R5, R6),
springs and anti-springs (R18), bombs, with bidding and doubling on and off.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ddz_env
from ddz_env.actions import (
    BID_1, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, NUM_ACTIONS, REDOUBLE,
)
from ddz_env.cards import deal, parse_cards
from ddz_env.rules import Rules
from ddz_env.game import Game, Phase
from ddz_env.legal import legal_ids_batch
from ddz_env.moves import MOVE_COUNTS, MOVE_TYPE, NUM_MOVES, MoveType
from ddz_env.observation import HISTORY, PublicView, encode, observe_game
from ddz_env.vector import (
    VectorDouDizhu, VectorEnv, expand_mask, random_legal_actions,
)

POLICIES = ("random", "random", "void", "spring", "anti_spring", "double_all", "bomb")


# ---------------------------------------------------------------------------- helpers
def _game_of(vec: VectorDouDizhu, b: int) -> Game:
    d = vec.deal_of(b)
    return Game(d.hands, d.bottom, d.first_bidder, rules=vec.rules, landlord=d.landlord)


def _choose(g: Game, legal: np.ndarray, policy: str, rng: np.random.Generator) -> int:
    """An action of ``legal`` steered by ``policy`` (uniform where the policy does not care)."""
    p = g.phase
    s = g.current_player
    if p == Phase.BID and policy == "void":
        return BID_PASS
    if p == Phase.BID and policy in ("spring", "anti_spring", "double_all"):
        return int(legal[-1])  # bid as high as allowed: a landlord soon
    if p in (Phase.DOUBLE, Phase.REDOUBLE) and policy == "double_all":
        return int(legal[-1])
    if p == Phase.PLAY:
        lord = g.landlord
        if 0 in legal and ((policy == "spring" and s != lord) or (policy == "anti_spring" and s == lord)):
            return 0
        if policy == "bomb":
            big = legal[np.isin(MOVE_TYPE[legal], (MoveType.BOMB, MoveType.ROCKET))]
            if big.size:
                return int(big[rng.integers(big.size)])
    return int(legal[rng.integers(legal.size)])


class _SlotMirror:
    """Deals of one slot replayed from its seed, the AEC env's way (deal, first bidder, R4)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.next_fb: int | None = None

    def next_deal(self):
        hands, bottom = deal(self.rng)
        drawn = int(self.rng.integers(3))
        fb = self.next_fb if self.next_fb is not None else drawn
        self.next_fb = None
        return hands, bottom, fb


def _assert_same_position(vec, obs, b, g, where):
    s = g.current_player
    assert obs["current_player"][b] == s == vec.current_player[b], where
    assert obs["phase"][b] == int(g.phase), where
    np.testing.assert_array_equal(vec.legal_actions(b), g.legal_actions(), err_msg=where)
    if obs["observation"] is not None:
        np.testing.assert_array_equal(obs["observation"][b], observe_game(g, s), err_msg=where)


def _run_equivalence(seed: int, B: int, steps: int, bidding=True, doubling=True, reward="score", scale=1.0,
                     policies=POLICIES, check_all_seats_every=0) -> dict:
    vec = VectorDouDizhu(B, seed=seed, rules=Rules(bidding=bidding, doubling=doubling), reward=reward,
                         reward_scale=scale)
    obs = vec.reset()
    rng = np.random.default_rng(1000 + seed)
    mirrors = [_SlotMirror(vec.slot_seed(b)) for b in range(B)]
    games, policy = [], []
    for b in range(B):
        hands, bottom, fb = mirrors[b].next_deal()
        d = vec.deal_of(b)
        np.testing.assert_array_equal(d.hands, hands)
        np.testing.assert_array_equal(d.bottom, bottom)
        assert d.first_bidder == fb
        games.append(_game_of(vec, b))
        policy.append(policies[rng.integers(len(policies))])
    seen = dict(hands=0, void=0, spring=0, anti_spring=0, redouble=0, doubled=0, bombs=0, rockets=0,
                farmers_won=0, landlord_won=0, lead_again=0)
    for t in range(steps):
        for b, g in enumerate(games):
            _assert_same_position(vec, obs, b, g, f"seed {seed} step {t} hand {b}")
        if check_all_seats_every and t % check_all_seats_every == 0:
            for seat in range(3):
                views = vec.observe(seat)
                for b, g in enumerate(games):
                    np.testing.assert_array_equal(views[b], observe_game(g, seat), err_msg=f"seat {seat} hand {b}")
        defaults = vec.default_actions()
        for b, g in enumerate(games):
            assert defaults[b] == g.default_action()  # R20
        actions = np.array([_choose(g, vec.legal_actions(b), policy[b], rng) for b, g in enumerate(games)])
        if t % 23 == 5:
            actions = defaults  # the timeout actions are legal moves too
        obs, rewards, done, info = vec.step(actions)
        assert rewards.shape == (B, 3) and rewards.dtype == np.float32
        for b, g in enumerate(games):
            was_passes = g.passes
            g.step(int(actions[b]))
            if g.phase == Phase.PLAY and actions[b] == 0 and was_passes == 1:
                seen["lead_again"] += 1
            assert done[b] == g.is_over, f"seed {seed} step {t} hand {b}"
            if not g.is_over:
                assert not rewards[b].any() and not info["final_scores"][b].any()
                continue
            seen["hands"] += 1
            assert info["void"][b] == g.void
            np.testing.assert_array_equal(info["final_scores"][b], g.scores)
            if g.void:
                seen["void"] += 1
                assert not rewards[b].any() and info["winner"][b] == -1
                mirrors[b].next_fb = g.next_first_bidder  # R4
            else:
                assert info["winner"][b] == g.winner and info["landlord"][b] == g.landlord
                assert info["spring"][b] == g.spring and info["anti_spring"][b] == g.anti_spring
                if reward == "score":
                    expected = g.scores * scale
                else:
                    lord_won = g.winner == g.landlord
                    expected = [scale * (1.0 if (s == g.landlord) == lord_won else -1.0) for s in range(3)]
                np.testing.assert_allclose(rewards[b], np.asarray(expected, np.float32))
                seen["spring"] += g.spring
                seen["anti_spring"] += g.anti_spring
                seen["redouble"] += g.redoubled
                seen["doubled"] += int(g.doubled().any())
                seen["bombs"] += g.bombs
                seen["rockets"] += g.rockets
                seen["farmers_won"] += g.winner != g.landlord
                seen["landlord_won"] += g.winner == g.landlord
            # the slot holds the next hand, dealt from the slot's own generator
            hands, bottom, fb = mirrors[b].next_deal()
            d = vec.deal_of(b)
            np.testing.assert_array_equal(d.hands, hands)
            np.testing.assert_array_equal(d.bottom, bottom)
            assert d.first_bidder == fb
            games[b] = _game_of(vec, b)
            policy[b] = policies[rng.integers(len(policies))]
    for b, g in enumerate(games):
        _assert_same_position(vec, obs, b, g, f"seed {seed} end hand {b}")
    return seen


# ---------------------------------------------------------------------------- equivalence with Game
@pytest.mark.parametrize("seed", range(10))
def test_equivalence_with_game_full_rules(seed):
    seen = _run_equivalence(seed, B=8, steps=400, check_all_seats_every=37)
    assert seen["hands"] >= 20


def test_equivalence_covers_every_corner():
    """One longer run that must meet every special case at least once."""
    total: dict[str, int] = {}
    for seed in (11, 12):
        for k, v in _run_equivalence(seed, B=8, steps=600).items():
            total[k] = total.get(k, 0) + v
    for key in ("void", "spring", "anti_spring", "redouble", "doubled", "bombs", "rockets", "farmers_won",
                "landlord_won", "lead_again"):
        assert total[key] > 0, (key, total)


@pytest.mark.parametrize("bidding,doubling", [(False, True), (True, False), (False, False)])
def test_equivalence_without_bidding_or_doubling(bidding, doubling):
    seen = _run_equivalence(21, B=8, steps=300, bidding=bidding, doubling=doubling)
    assert seen["hands"] >= 10
    if not bidding:
        assert seen["void"] == 0


def test_equivalence_win_reward_and_scale():
    _run_equivalence(31, B=6, steps=300, reward="win", scale=0.5)
    _run_equivalence(32, B=6, steps=300, reward="score", scale=0.25)


def test_equivalence_batch_of_one_and_odd_sizes():
    _run_equivalence(41, B=1, steps=200)
    _run_equivalence(42, B=3, steps=200, check_all_seats_every=11)


def test_observation_chunks(monkeypatch):
    """Big batches are encoded in chunks: the chunk edges must not show."""
    import ddz_env.observation as observation

    monkeypatch.setattr(observation, "_OBS_CHUNK", 3)
    _run_equivalence(51, B=8, steps=120, check_all_seats_every=17)


def test_no_observation_mode_same_play():
    """``observe=False`` skips the planes and changes nothing else."""
    a, b = VectorDouDizhu(16, seed=5), VectorDouDizhu(16, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(150):
        acts = a.random_actions(rng)
        oa, ra, da, _ = a.step(acts)
        ob, rb, db, _ = b.step(acts, observe=False)
        assert ob["observation"] is None
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)
        np.testing.assert_array_equal(oa["legal_ids"], ob["legal_ids"])
    np.testing.assert_array_equal(a.observe(), b.observe())


# ---------------------------------------------------------------------------- equivalence with the AEC env
def test_equivalence_with_aec_env_from_slot_seeds():
    """AEC envs seeded with the slots' seeds (then reset without a seed) replay the slots hand by hand."""
    B = 6
    vec = VectorDouDizhu(B, seed=7)
    obs = vec.reset()
    envs = []
    for b in range(B):
        e = ddz_env.raw_env()
        e.reset(seed=vec.slot_seed(b))
        envs.append(e)
    rng = np.random.default_rng(3)
    masks = vec.action_masks()
    hands_done = voids = 0
    for t in range(500):
        actions = np.empty(B, np.int64)
        for b, e in enumerate(envs):
            agent = e.agent_selection
            assert agent == f"player_{obs['current_player'][b]}"
            o = e.observe(agent)
            np.testing.assert_array_equal(o["observation"], obs["observation"][b])
            np.testing.assert_array_equal(o["action_mask"], masks[b])
            legal = np.flatnonzero(o["action_mask"])
            # pass every bid now and then: void hands, and the R4 first bidder of the next deal
            if e.game.phase == Phase.BID and (t // 50) % 3 == 0:
                actions[b] = BID_PASS
            else:
                actions[b] = legal[rng.integers(legal.size)]
        obs, rewards, done, info = vec.step(actions)
        masks = vec.action_masks(out=masks)
        for b, e in enumerate(envs):
            e.step(int(actions[b]))
            ended = all(e.terminations.values())
            assert ended == done[b]
            if ended:
                hands_done += 1
                voids += int(e.game.void)
                np.testing.assert_array_equal(rewards[b], [e.rewards[a] for a in e.possible_agents])
                assert info["void"][b] == e.game.void
                e.reset()  # no seed: the next deal of the same generator
                np.testing.assert_array_equal(vec.deal_of(b).hands, e.game.initial_hands)
                np.testing.assert_array_equal(vec.deal_of(b).bottom, e.game.bottom)
                assert vec.deal_of(b).first_bidder == e.game.first_bidder
    assert hands_done >= 10 and voids >= 1


def test_equivalence_with_aec_env_given_deals_no_bidding():
    B = 4
    vec = VectorDouDizhu(B, seed=9, rules="bidding=false")
    obs = vec.reset()
    envs = [ddz_env.raw_env(rules="bidding=false") for _ in range(B)]
    for b, e in enumerate(envs):
        e.reset(options={"deal": vec.deal_of(b)})
    rng = np.random.default_rng(4)
    for _t in range(300):
        masks = vec.action_masks()
        for b, e in enumerate(envs):
            o = e.observe(e.agent_selection)
            np.testing.assert_array_equal(o["observation"], obs["observation"][b])
            np.testing.assert_array_equal(o["action_mask"], masks[b])
        actions = vec.random_actions(rng)
        obs, rewards, done, info = vec.step(actions)
        for b, e in enumerate(envs):
            e.step(int(actions[b]))
            assert all(e.terminations.values()) == done[b]
            if done[b]:
                np.testing.assert_array_equal(rewards[b], [e.rewards[a] for a in e.possible_agents])
                e.reset(options={"deal": vec.deal_of(b)})


# ---------------------------------------------------------------------------- seeding and auto-reset
def _trajectory(seed, B=12, steps=250, reseed=None):
    vec = VectorDouDizhu(B, seed=seed)
    obs = vec.reset(seed=reseed)
    rng = np.random.default_rng(0)
    out = [obs["observation"].copy()]
    for _ in range(steps):
        obs, r, d, info = vec.step(vec.random_actions(rng))
        out += [obs["observation"], r, d, obs["legal_ids"]]
    return out


def test_same_seed_same_sequence():
    a, b = _trajectory(3), _trajectory(3)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    c = _trajectory(4)
    assert any(x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(a, c))


def test_reset_with_seed_reseeds():
    a = _trajectory(3)
    b = _trajectory(99, reseed=3)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_slot_sequence_does_not_depend_on_batch_size_or_neighbours():
    """Slot b's hands depend only on its seed and its own actions: the slot seeds are a prefix-stable stream."""
    small, big = VectorDouDizhu(4, seed=8), VectorDouDizhu(8, seed=8)
    np.testing.assert_array_equal(big.state.slot_seeds[:4], small.state.slot_seeds)
    for b in range(4):
        np.testing.assert_array_equal(small.deal_of(b).hands, big.deal_of(b).hands)


def test_slot_deals_match_cards_deal():
    vec = VectorDouDizhu(5, seed=123)
    for b in range(5):
        rng = np.random.default_rng(vec.slot_seed(b))
        hands, bottom = deal(rng)
        fb = int(rng.integers(3))
        d = vec.deal_of(b)
        np.testing.assert_array_equal(d.hands, hands)
        np.testing.assert_array_equal(d.bottom, bottom)
        assert d.first_bidder == fb
        assert vec.state.hand_count[b] == 1


def test_r4_void_hand_next_seat_bids_first():
    vec = VectorDouDizhu(4, seed=2)
    fb = vec.state.first_bidder.copy()
    for _ in range(3):  # everyone passes: the hand is void, rewards 0
        obs, r, d, info = vec.step(np.full(4, BID_PASS))
    assert d.all() and info["void"].all() and not r.any() and not info["final_scores"].any()
    np.testing.assert_array_equal(vec.state.first_bidder, (fb + 1) % 3)
    np.testing.assert_array_equal(obs["current_player"], (fb + 1) % 3)
    assert vec.state.void.all() and (vec.state.hand_count == 2).all()


# ---------------------------------------------------------------------------- validation
def _state(vec):
    names = [k for k, v in vars(vec).items() if isinstance(v, np.ndarray)]
    return {k: getattr(vec, k).copy() for k in names}


def test_illegal_action_raises_and_changes_nothing():
    vec = VectorDouDizhu(6, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        vec.step(vec.random_actions(rng))
    good = vec.random_actions(rng)
    before = _state(vec)
    rng_states = [r.bit_generator.state for r in vec._rngs]
    for b in (0, 4):
        bad = good.copy()
        legal = set(vec.legal_actions(b).tolist())
        bad[b] = next(a for a in (0, 1, BID_3, DOUBLE, REDOUBLE, NUM_MOVES - 1) if a not in legal)
        phase = Phase(int(vec.phase[b])).name
        with pytest.raises(ValueError, match=rf"illegal action {bad[b]} .*hand {b} in phase {phase}"):
            vec.step(bad)
        after = _state(vec)
        for k in before:
            np.testing.assert_array_equal(before[k], after[k], err_msg=k)
        assert [r.bit_generator.state for r in vec._rngs] == rng_states
    for bad_value in (-1, NUM_ACTIONS, 10 ** 12):
        bad = good.copy()
        bad[2] = bad_value
        with pytest.raises(ValueError, match="hand 2"):
            vec.step(bad)
    with pytest.raises(ValueError):
        vec.step(good[:5])
    with pytest.raises(ValueError):
        vec.step(good.astype(np.float64) + 0.5)
    vec.step(good)  # the legal actions still work after the refusals


def test_phase_specific_illegal_actions():
    vec = VectorDouDizhu(2, seed=0)
    with pytest.raises(ValueError, match="phase BID"):
        vec.step(np.array([DOUBLE, BID_PASS]))
    with pytest.raises(ValueError, match="hand 1 in phase BID"):
        vec.step(np.array([BID_PASS, 5]))
    vec.step(np.array([BID_1, BID_1]))
    with pytest.raises(ValueError, match="illegal action 24641"):  # bid 1 again: must be higher (R3)
        vec.step(np.array([BID_1, BID_PASS]))


# ---------------------------------------------------------------------------- masks and compact sets
def test_compact_sets_and_dense_mask():
    vec = VectorDouDizhu(32, seed=6)
    rng = np.random.default_rng(1)
    buf = None
    for _ in range(120):
        obs, *_ = vec.step(vec.random_actions(rng))
        rows, ids, starts = obs["legal_rows"], obs["legal_ids"], obs["legal_starts"]
        assert np.all(np.diff(rows) >= 0)
        np.testing.assert_array_equal(np.bincount(rows, minlength=32), np.diff(starts))
        dense = expand_mask(rows, ids, 32)
        assert dense.dtype == np.int8 and dense.shape == (32, NUM_ACTIONS)
        buf = vec.action_masks(out=buf)
        np.testing.assert_array_equal(buf, dense)
        lists = vec.legal_lists()
        for b in range(32):
            np.testing.assert_array_equal(np.flatnonzero(dense[b]), lists[b])
            np.testing.assert_array_equal(vec.legal_actions(b), ids[rows == b])
            assert lists[b].size >= 1
    with pytest.raises(ValueError):
        expand_mask(rows, ids, 32, out=np.zeros((31, NUM_ACTIONS), np.int8))


def test_random_legal_actions_is_uniform_over_each_set():
    starts = np.array([0, 1, 4, 6])
    ids = np.array([7, 1, 2, 3, 10, 11])
    rng = np.random.default_rng(0)
    draws = np.stack([random_legal_actions(starts, ids, rng) for _ in range(3000)])
    assert (draws[:, 0] == 7).all()
    assert set(np.unique(draws[:, 1])) == {1, 2, 3} and set(np.unique(draws[:, 2])) == {10, 11}
    assert abs((draws[:, 1] == 2).mean() - 1 / 3) < 0.05


def test_legal_sets_are_read_only():
    obs = VectorDouDizhu(2, seed=0).reset()
    with pytest.raises(ValueError):
        obs["legal_ids"][0] = 5


# ---------------------------------------------------------------------------- fast paths == core functions
def _positions(n_steps=60, B=64, seed=0):
    vec = VectorDouDizhu(B, seed=seed)
    rng = np.random.default_rng(seed)
    hands, lasts = [], []
    for _ in range(n_steps):
        p = np.flatnonzero(vec.phase == Phase.PLAY)
        hands.append(vec.hands[p, vec.current_player[p]])
        lasts.append(vec.state.last_move[p])
        vec.step(vec.random_actions(rng))
    return np.concatenate(hands), np.concatenate(lasts)


def test_response_path_equals_single_hand_path():
    """legal_ids_batch on all-responding batches takes legal.response_ids_batch: check it hand by hand."""
    from ddz_env.legal import legal_ids, response_ids_batch
    hands, lasts = _positions()
    r = lasts != 0
    assert r.sum() > 500
    rows_b, ids_b = response_ids_batch(hands[r], lasts[r])
    rows_c, ids_c = legal_ids_batch(hands[r], lasts[r])
    np.testing.assert_array_equal(rows_b, rows_c)
    np.testing.assert_array_equal(ids_b, ids_c)
    for i, (h, m) in enumerate(zip(hands[r], lasts[r])):
        np.testing.assert_array_equal(ids_b[rows_b == i], legal_ids(h, int(m)))
    # bombs and the rocket in hand (R13's kicker rule) and against bombs
    from ddz_env.cards import parse_cards
    from ddz_env.moves import move_id
    h = np.stack([parse_cards(x) for x in ("3333444455BR", "3333456789TJQKA2", "BR2222AAKK")])
    for last in ("5", "44", "6666", "33344456", "333444555666789T", "8888JJQQ", "9999"):
        m = np.full(3, move_id(last))
        rows, ids = response_ids_batch(h, m)
        for i in range(3):
            np.testing.assert_array_equal(ids[rows == i], legal_ids(h[i], last))


def _random_encode_inputs(B, rng):
    hm = rng.integers(0, NUM_MOVES, (B, HISTORY))
    hs = rng.integers(-1, 3, (B, HISTORY))
    hm[hs < 0] = 0
    tb = rng.integers(0, NUM_MOVES, B)
    inputs = dict(
        hand=rng.integers(0, 5, (B, 15)).astype(np.int8), unseen=rng.integers(0, 5, (B, 15)),
        bottom=rng.integers(0, 2, (B, 15)).astype(np.int8), played=rng.integers(0, 5, (B, 3, 15)).astype(np.int8),
        to_beat=MOVE_COUNTS[tb], hist_cards=MOVE_COUNTS[hm], hist_seat=hs,
        hist_pass=(hs >= 0) & (rng.random((B, HISTORY)) < 0.3), cards_left=rng.integers(0, 21, (B, 3)),
        bids=rng.integers(-1, 4, (B, 3)).astype(np.int8), first_bidder=rng.integers(0, 3, B),
        doubling=rng.integers(-1, 2, (B, 3)).astype(np.int8), redouble=rng.integers(-1, 2, B).astype(np.int8),
        phase=rng.integers(0, 5, B).astype(np.int8), role=rng.integers(-1, 3, B), beat_seat=rng.integers(-1, 3, B),
        bombs=rng.integers(0, 16, B), rocket=rng.random(B) < 0.5,
    )
    return inputs, tb, hm


@pytest.mark.parametrize("B", [1, 7, 200])
def test_encode_by_move_ids_equals_encode_by_cards(B):
    inputs, tb, hm = _random_encode_inputs(B, np.random.default_rng(B))
    expected = encode(PublicView(**inputs))
    by_ids = dict(inputs, to_beat=None, hist_cards=None)
    np.testing.assert_array_equal(encode(PublicView(**by_ids), to_beat_move=tb, hist_moves=hm), expected)
    # the card planes decode back to the inputs (thermometer rows)
    np.testing.assert_array_equal(expected[:, 0].sum(axis=1), inputs["hand"])
    np.testing.assert_array_equal(expected[:, 6].sum(axis=1), inputs["to_beat"])


# ---------------------------------------------------------------------------- springs, constructed
def test_constructed_spring_and_anti_spring():
    """A landlord with a strong hand whose farmers always pass: spring (R18) doubles the score."""
    vec = VectorDouDizhu(2, seed=0)
    hands = ["3333444455556666B", "77778888999TTTTJJ", "JJQQQQKKKKAAAA222"]
    bottom = "2R9"
    vec.load_deal(0, hands, bottom, first_bidder=0)
    vec.load_deal(1, hands, bottom, first_bidder=0)
    g0 = Game.from_deal(hands, bottom, 0)
    g1 = Game.from_deal(hands, bottom, 0)
    rng = np.random.default_rng(0)
    ended = np.zeros(2, bool)
    scores = {}
    for _ in range(200):
        obs = vec._obs_dict(True)
        acts = np.zeros(2, np.int64)
        for b, (g, pol) in enumerate(((g0, "spring"), (g1, "anti_spring"))):
            if ended[b]:
                acts[b] = vec.random_actions(rng)[b]
                continue
            _assert_same_position(vec, obs, b, g, f"hand {b}")
            if g.phase == Phase.BID:
                acts[b] = BID_3 if g.current_player == 0 else BID_PASS
            elif g.phase == Phase.DOUBLE:
                acts[b] = DOUBLE
            elif g.phase == Phase.REDOUBLE:
                acts[b] = NO_REDOUBLE
            else:
                acts[b] = _choose(g, g.legal_actions(), pol, rng)
        _, r, d, info = vec.step(acts)
        for b, g in enumerate((g0, g1)):
            if ended[b]:
                continue
            g.step(int(acts[b]))
            assert d[b] == g.is_over
            if d[b]:
                ended[b] = True
                scores[b] = (info["final_scores"][b].copy(), info["spring"][b], info["anti_spring"][b], g)
        if ended.all():
            break
    assert ended.all()
    s0, spring0, anti0, g = scores[0]
    assert spring0 and not anti0 and g.spring
    np.testing.assert_array_equal(s0, g.scores)
    # bid 3, each farmer doubled (x2), spring (x2), bombs (x2 each), no redouble: the landlord wins
    assert s0[0] == -(s0[1] + s0[2]) and s0[0] > 0 and s0[1] == s0[2] == -3 * 2 ** (1 + 1 + g.bombs + g.rockets)
    s1, spring1, anti1, g = scores[1]
    np.testing.assert_array_equal(s1, g.scores)
    assert spring1 == g.spring and anti1 == g.anti_spring
    if g.winner != 0:  # a farmer went out while the landlord only ever passed after its opening move
        assert anti1


def test_load_deal_validates():
    vec = VectorDouDizhu(1, seed=0)
    with pytest.raises(ValueError):
        vec.load_deal(0, ["3" * 4, "4" * 4, "5" * 4], "678")
    with pytest.raises(ValueError):
        vec.load_deal(0, ["3333444455556666B", "77778888999TTTTJJ", "JJQQQQKKKKAAAA222"], "2R9", first_bidder=3)


# ---------------------------------------------------------------------------- API
def test_api_shapes_and_alias():
    assert VectorEnv is VectorDouDizhu
    vec = VectorEnv(5, seed=0)
    obs = vec.reset()
    assert obs["observation"].shape == (5, 29, 4, 15) and obs["observation"].dtype == np.int8
    assert obs["current_player"].shape == (5,) and obs["legal_starts"].shape == (6,)
    obs, r, d, info = vec.step(vec.random_actions(np.random.default_rng(0)))
    assert r.shape == (5, 3) and d.shape == (5,) and d.dtype == bool
    for k in ("final_scores", "void", "winner", "landlord", "spring", "anti_spring"):
        assert info[k].shape[0] == 5
    assert vec.observe(0).shape == (5, 29, 4, 15)
    assert vec.observe(np.array([0, 1, 2, 0, 1])).shape == (5, 29, 4, 15)
    with pytest.raises(ValueError):
        vec.observe(3)
    with pytest.raises(ValueError):
        VectorDouDizhu(0)
    with pytest.raises(ValueError):
        VectorDouDizhu(2, reward="money")
    assert "VectorDouDizhu" in repr(vec)
    # the bid ids of the legal sets: pass then the bids above the current one
    first = vec.legal_actions(0)
    assert first[0] == BID_PASS and set(first[1:]) <= set(range(BID_1, BID_3 + 1))
    assert NO_DOUBLE < DOUBLE < NO_REDOUBLE < REDOUBLE


# ---------------------------------------------------------------------------- input validation (issue 12)
_DEAL = (["3333444455556666B", "77778888999TTTTJJ", "JJQQQQKKKKAAAA222"], "2R9")


def _all_state(vec):
    return _state(vec), [r.bit_generator.state for r in vec._rngs]


def _assert_same(vec, snap):
    before, rngs = snap
    after = _state(vec)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k], err_msg=k)
    assert [r.bit_generator.state for r in vec._rngs] == rngs


def test_step_requires_actions_of_shape_exactly_b():
    vec = VectorDouDizhu(6, seed=0)
    good = vec.random_actions(np.random.default_rng(0))
    snap = _all_state(vec)
    for bad in (good.reshape(2, 3), good.reshape(6, 1), good.reshape(1, 6), good[:1]):
        with pytest.raises(ValueError, match=rf"shape \(6,\).*got shape {re.escape(str(bad.shape))}"):
            vec.step(bad)
        _assert_same(vec, snap)
    vec.step(good)
    one = VectorDouDizhu(1, seed=0)
    with pytest.raises(ValueError, match="shape"):
        one.step(one.random_actions(np.random.default_rng(0))[0])  # a bare id is no (1,) batch
    one.step(list(one.random_actions(np.random.default_rng(0))))  # a list of B ids is fine


@pytest.mark.parametrize("method", ["legal_actions", "slot_seed", "deal_of"])
def test_slot_indices_are_checked_not_wrapped(method):
    vec = VectorDouDizhu(6, seed=0)
    fn = getattr(vec, method)
    for bad in (-1, -6, 6, 10 ** 9):
        with pytest.raises(ValueError, match=rf"slot index {bad} out of range \[0, 6\)"):
            fn(bad)
    for bad in (1.0, 2.5, "1", None):
        with pytest.raises(TypeError, match=re.escape(repr(bad))):
            fn(bad)
    fn(np.int64(5))  # numpy integers are slots


def test_load_deal_checks_its_slot_and_changes_nothing_when_refused():
    vec = VectorDouDizhu(3, seed=0)
    snap = _all_state(vec)
    hands, bottom = _DEAL
    with pytest.raises(ValueError, match=r"load_deal: slot index -1 out of range \[0, 3\)"):
        vec.load_deal(-1, hands, bottom)
    with pytest.raises(ValueError, match="slot index 3"):
        vec.load_deal(3, hands, bottom)
    with pytest.raises(TypeError, match="1.7"):
        vec.load_deal(1.7, hands, bottom)  # was slot 1
    with pytest.raises(ValueError, match="first_bidder"):
        vec.load_deal(0, hands, bottom, first_bidder=1.5)  # was seat 1
    with pytest.raises(TypeError, match="hands must be a sequence of 3 hands.*None"):
        vec.load_deal(0, None, bottom)
    _assert_same(vec, snap)
    vec.load_deal(np.int64(2), hands, bottom, first_bidder=np.int64(1))
    assert vec.state.first_bidder[2] == 1 and vec.state.initial_hands[2, 0, 0] == 4


def test_load_deals_never_truncates_float_slots_seats_or_counts():
    vec = VectorDouDizhu(3, seed=0)
    snap = _all_state(vec)
    h = np.stack([parse_cards(x) for x in _DEAL[0]])[None]
    bt = parse_cards(_DEAL[1])[None]
    with pytest.raises(TypeError, match="slots must be integers"):
        vec.load_deals([1.7], h, bt, [0])
    with pytest.raises(TypeError, match="first_bidders must be integers"):
        vec.load_deals([1], h, bt, [1.5])
    frac = h.astype(np.float64)
    frac[0, 0, 0] -= 0.5  # 3.5 threes and 4.5 fours: still 17 cards a hand
    frac[0, 0, 1] += 0.5
    with pytest.raises(ValueError, match="whole numbers.*3.5"):
        vec.load_deals([1], frac, bt, [0])
    with pytest.raises(ValueError, match="whole numbers.*nan"):
        vec.load_deals([1], h, np.where(bt > 0, np.nan, 0.0), [0])
    _assert_same(vec, snap)
    vec.load_deals([1], h.astype(np.float64), bt, [0])  # whole-number floats are still counts
    np.testing.assert_array_equal(vec.state.initial_hands[1], h[0])


def test_observe_seat_and_constructor_sizes_are_never_truncated():
    vec = VectorDouDizhu(3, seed=0)
    with pytest.raises(TypeError, match="1.5"):
        vec.observe(1.5)
    with pytest.raises(TypeError):
        vec.observe(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        vec.observe(np.array([0, 1]))
    np.testing.assert_array_equal(vec.observe(np.array([1, 1, 1])), vec.observe(1))
    for bad in (2.5, 3.0, "3"):
        with pytest.raises(TypeError, match="num_envs"):
            VectorDouDizhu(bad)
    assert VectorDouDizhu(np.int64(2)).num_envs == 2


def test_expand_mask_refuses_float_indices():
    with pytest.raises(TypeError, match="ids must be integers"):
        expand_mask(np.array([0]), np.array([1.9]), 1)
    with pytest.raises(TypeError, match="rows must be integers"):
        expand_mask(np.array([0.5]), np.array([1]), 1)
    assert expand_mask([], [], 2).sum() == 0
    assert expand_mask([1], [7], 2)[1, 7] == 1


def test_state_dict_continues_exactly_and_refuses_a_mismatch():
    """VectorDouDizhu.state_dict/load_state_dict (checkpoints): a copy continues identically, hands
    and generators alike; a state of another size is refused by name and changes nothing."""
    a = VectorDouDizhu(8, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(40):
        a.step(a.random_actions(rng), observe=False)
    st = a.state_dict()
    b = VectorDouDizhu(8, seed=99)
    b.load_state_dict(st)
    r1, r2 = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(300):  # long enough for hands to end and new ones to be dealt from the generators
        o1, rw1, d1, _ = a.step(a.random_actions(r1))
        o2, rw2, d2, _ = b.step(b.random_actions(r2))
        np.testing.assert_array_equal(o1["observation"], o2["observation"])
        np.testing.assert_array_equal(rw1, rw2)
    old = {**st, "arrays": {k: v for k, v in st["arrays"].items() if k != "slot_seeds"}}
    VectorDouDizhu(8).load_state_dict(old)  # written before slot_seeds was saved: still loads
    c = VectorDouDizhu(4, seed=3)
    before = c.state_dict()
    with pytest.raises(ValueError, match="shape"):
        c.load_state_dict(st)
    bad = {**st, "arrays": {**st["arrays"], "nonsense": np.zeros(3)}}
    with pytest.raises(ValueError, match="unknown \\['nonsense'\\]"):
        VectorDouDizhu(8).load_state_dict(bad)
    after = c.state_dict()
    assert all(np.array_equal(before["arrays"][k], after["arrays"][k]) for k in before["arrays"])


# ---------------------------------------------------------------------------- the hand summary in info (issue 23)
SUMMARY_KEYS = ("final_scores", "void", "winner", "landlord", "spring", "anti_spring", "bids", "doubles", "redouble",
                "bid", "first_bidder", "bombs", "rockets", "plays")


def _summary_of_game(g: Game) -> dict:
    """What step's info must say of a finished hand, from the scalar engine's replay."""
    bombs, rockets = np.zeros(3, np.int64), np.zeros(3, np.int64)
    for s, m in g.plays:
        bombs[s] += MOVE_TYPE[m] == MoveType.BOMB
        rockets[s] += MOVE_TYPE[m] == MoveType.ROCKET
    return {"final_scores": g.scores.tolist(), "void": g.void, "winner": g.winner,
            "landlord": -1 if g.void else g.landlord, "spring": g.spring, "anti_spring": g.anti_spring,
            "bids": g.bids.tolist(), "doubles": g.double_choice.tolist(), "redouble": g.redouble_choice,
            "bid": g.bid, "first_bidder": g.first_bidder, "bombs": bombs.tolist(), "rockets": rockets.tolist(),
            "plays": len(g.plays)}


@pytest.mark.parametrize("rules", ["rulebook", "douzero", "doubling=false", "bidding=false"])
def test_info_summary_of_every_ended_hand_equals_the_game_replay(rules):
    """Issue 23: step's info reports each ended hand's bids, doubles, redouble, bid, first bidder,
    bombs and rockets per seat and plays; replaying the same deal and actions on Game gives the same."""
    B = 12
    vec = VectorDouDizhu(B, seed=23, rules=rules)
    rng = np.random.default_rng(7)
    games = [Game.from_deal(vec.deal_of(b), rules=vec.rules) for b in range(B)]  # the replays, a step behind
    checked = {"void": 0, "bombs": 0, "redouble": 0, "hands": 0}
    for t in range(700):
        policy = [POLICIES[(b + t // 97) % len(POLICIES)] for b in range(B)]
        acts = np.array([_choose(games[b], vec.legal_actions(b), policy[b], rng) for b in range(B)])
        _, _, done, info = vec.step(acts, observe=False)
        assert set(SUMMARY_KEYS) <= set(info)
        for b in range(B):
            g = games[b]
            g.step(int(acts[b]))
            assert g.is_over == done[b]
            if not done[b]:  # rows of hands that go on: blank
                assert info["winner"][b] == -1 and info["first_bidder"][b] == -1 and info["plays"][b] == 0
                assert info["bids"][b].tolist() == [-1, -1, -1] and info["bombs"][b].tolist() == [0, 0, 0]
                continue
            got = {k: info[k][b].tolist() for k in SUMMARY_KEYS}
            assert got == _summary_of_game(g), (rules, t, b)
            checked["hands"] += 1
            checked["void"] += bool(g.void)
            checked["bombs"] += int(g.bombs + g.rockets > 0)
            checked["redouble"] += g.redouble_choice >= 0
            games[b] = Game.from_deal(vec.deal_of(b), rules=vec.rules)
    assert checked["hands"] >= 40 and checked["bombs"] >= 3, checked
    if Rules.of(rules).bidding:
        assert checked["void"] >= 1, checked
    if Rules.of(rules).doubling:
        assert checked["redouble"] >= 1, checked


def test_load_deals_takes_deal_values_and_the_old_arrays_alike():
    """Issue 23: load_deals(slots, deals) (Deals, tuples, dicts) == load_deals(slots, hands, bottoms, first_bidders);
    deal_of gives the Deal back, which Game.from_deal and the AEC env's options take."""
    from ddz_env.rules import Deal, deal_hand

    rng = np.random.default_rng(3)
    ds = [deal_hand(rng) for _ in range(3)]
    a, b = VectorDouDizhu(4, seed=1), VectorDouDizhu(4, seed=1)
    a.load_deals([3, 0, 2], [ds[0], (ds[1].hands, ds[1].bottom, ds[1].first_bidder), ds[2].to_dict(strings=True)])
    b.load_deals([3, 0, 2], np.stack([d.hands for d in ds]), np.stack([d.bottom for d in ds]),
                 [d.first_bidder for d in ds])
    np.testing.assert_array_equal(a.observe(), b.observe())
    assert a.deal_of(3) == ds[0] and a.deal_of(0) == ds[1] and isinstance(a.deal_of(2), Deal)
    np.testing.assert_array_equal(a.deal_of(3).hands, ds[0].hands)
    assert a.deal_of(3).landlord is None
    g = Game.from_deal(a.deal_of(2))
    np.testing.assert_array_equal(observe_game(g, g.current_player), a.observe()[2])
    e = ddz_env.raw_env()
    e.reset(options={"deal": a.deal_of(0)})
    np.testing.assert_array_equal(e.game.initial_hands, ds[1].hands)
    with pytest.raises(ValueError, match="load_deals: deal 0 names landlord 1; a landlord is given only when bidding"):
        a.load_deals([1], [Deal(ds[0].hands, ds[0].bottom, 0, landlord=1)])
    # bidding off: a deal's own landlord (not its first bidder) is the landlord, as Game has it
    v = VectorDouDizhu(2, seed=0, rules="douzero")
    fixed = Deal(ds[0].hands, ds[0].bottom, first_bidder=0, landlord=2)
    v.load_deals([1], [fixed])
    g = Game.from_deal(fixed, rules="douzero")
    assert g.landlord == 2 == v.landlord[1] and v.deal_of(1) == fixed == g.initial_deal
    np.testing.assert_array_equal(observe_game(g, g.current_player), v.observe()[1])


def test_state_without_the_summary_counters_still_loads():
    """Checkpoints written before seat_bombs / seat_rockets / plays were saved load (issue 23)."""
    a = VectorDouDizhu(4, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        a.step(a.random_actions(rng), observe=False)
    st = a.state_dict()
    assert {"seat_bombs", "seat_rockets", "plays"} <= set(st["arrays"])
    old = {**st, "arrays": {k: v for k, v in st["arrays"].items() if k not in ("seat_bombs", "seat_rockets", "plays")}}
    b = VectorDouDizhu(4, seed=9)
    b.load_state_dict(old)
    np.testing.assert_array_equal(a.observe(), b.observe())
    assert not b.state.plays.any() and not b.state.seat_bombs.any()


def _slots(vec):
    """Every per-hand array of the batch's state (copies)."""
    return {k: np.array(v) for k, v in vec.state.arrays().items() if np.ndim(v) and np.shape(v)[0] == vec.num_envs}


def test_step_with_active_moves_only_those_hands_and_leaves_the_others_as_they_were():
    """``step(actions, active=mask)``: the active hands move exactly as a batch of their own would (same
    states, rewards, done flags), the others keep every array and their generators; their actions (even
    illegal ones) are ignored. A one-seat learner holds its tables with it while opponents act."""
    vec, ref = VectorDouDizhu(6, seed=5), VectorDouDizhu(6, seed=5)
    rng = np.random.default_rng(1)
    held = VectorDouDizhu(6, seed=5)
    ends = 0
    for _ in range(160):
        active = rng.random(6) < 0.5
        acts = vec.random_actions(rng)
        before = _slots(vec)
        rng_states = [r.bit_generator.state for r in vec._rngs]
        noise = np.where(active, acts, NUM_ACTIONS + 7)  # the idle hands' entries: not even action ids
        _, rew, done, info = vec.step(noise, active=active)
        after = _slots(vec)
        idle = np.flatnonzero(~active)
        for k in before:
            np.testing.assert_array_equal(before[k][idle], after[k][idle], err_msg=k)
        assert [r.bit_generator.state for i, r in enumerate(vec._rngs) if not active[i]] == \
               [s for i, s in enumerate(rng_states) if not active[i]]
        assert not done[idle].any() and not rew[idle].any()
        # the same actions, one hand at a time, on the reference batch (its other hands held too)
        for b in np.flatnonzero(active).tolist():
            one = np.zeros(6, bool)
            one[b] = True
            _, r1, d1, i1 = ref.step(np.where(one, acts, 0), active=one)
            assert bool(d1[b]) == bool(done[b])
            np.testing.assert_array_equal(r1[b], rew[b])
            np.testing.assert_array_equal(i1["final_scores"][b], info["final_scores"][b])
        ends += int(done.sum())
    for k, v in _slots(vec).items():
        np.testing.assert_array_equal(v, _slots(ref)[k], err_msg=k)
    assert ends > 5  # hands ended (and were dealt afresh) under the mask
    with pytest.raises(ValueError, match="active must be a"):
        held.step(held.random_actions(rng), active=np.ones(5, bool))
    with pytest.raises(ValueError, match="active must be a"):
        held.step(held.random_actions(rng), active=np.ones(6, np.int64))
    bad = held.random_actions(rng)
    bad[0] = NUM_ACTIONS + 1
    on = np.zeros(6, bool)
    on[0] = True
    with pytest.raises(ValueError, match="hand 0"):  # an active hand's illegal action is still refused
        held.step(bad, active=on)
