"""Random play speed, one core: full hands and decisions per CPU-second.

    python benchmarks/bench_speed.py [--seconds 5] [--sizes 64 1024 8192] [--quick]

Every row plays uniform-random legal actions (bidding and doubling included where the
engine has them) and is timed with ``time.process_time`` (CPU seconds of this process,
so other load on the machine counts less than with wall time). Rows:

* ``ddz_env.env()``: the AEC env with PettingZoo's classic wrapper checks (``ClassicWrapper``),
  ``last()`` (observation + dense mask) before every action.
* ``VectorDouDizhu(B)``: the batched env, B hands per ``step``, one random legal id
  per hand drawn from the compact legal sets, with the observation planes of every
  hand on every step (the main figure), and once more with ``observe=False``.
  Measured after a warm-up long enough that the hands of the batch are out of step
  (a batch starts with every hand at its first bid).
* RLCard's ``doudizhu`` env, DouZero's ``GameEnv`` and OpenSpiel's ``dou_dizhu``, each
  when importable (skipped with a note otherwise). They play their own rule sets:
  RLCard and DouZero have no bidding and no doubling (a fixed landlord), OpenSpiel
  has bidding but no doubling; a "decision" is one action of a player (chance
  nodes and DouZero's deal not counted).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import ddz_env  # noqa: E402
from ddz_env.vector import VectorDouDizhu  # noqa: E402

OPENSPIEL_REFERENCE = 7000  # hands/s of OpenSpiel's C++ dou_dizhu quoted in the issue


def cpu() -> float:
    return time.process_time()


# ---------------------------------------------------------------------------- this project
def bench_aec(seconds: float):
    env = ddz_env.env()
    rng = np.random.default_rng(0)
    hands = steps = 0
    env.reset(seed=0)
    t0 = cpu()
    while cpu() - t0 < seconds:
        for _agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"].view(bool))
            env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        hands += 1
        env.reset()
    dt = cpu() - t0
    return hands / dt, steps / dt, "classic wrapper checks, last() every step"


def bench_vector(B: int, seconds: float, observe: bool = True):
    vec = VectorDouDizhu(B, seed=0)
    rng = np.random.default_rng(0)
    obs = vec.reset()
    warm = 0
    t0 = cpu()
    # warm-up: about three hand lengths (~65 decisions each), capped in time for big batches
    while warm < 200 and (warm < 60 or cpu() - t0 < seconds):
        obs, _, _, _ = vec.step(vec.random_actions(rng), observe=observe)
        warm += 1
    hands = steps = 0
    t0 = cpu()
    while cpu() - t0 < seconds:
        obs, rewards, done, info = vec.step(vec.random_actions(rng), observe=observe)
        hands += int(done.sum())
        steps += 1
    dt = cpu() - t0
    note = "observations on" if observe else "no observations (observe=False)"
    return hands / dt, steps * B / dt, note


# ---------------------------------------------------------------------------- other engines
def bench_rlcard(seconds: float, seed: int = 0):
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("doudizhu", config={"seed": seed})
    rng = np.random.default_rng(seed)
    hands = steps = 0
    t0 = cpu()
    while cpu() - t0 < seconds:
        state, player = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"].keys())
            state, player = env.step(legal[rng.integers(len(legal))])
            steps += 1
        hands += 1
    dt = cpu() - t0
    return hands / dt, steps / dt, "its env + state encoding; no bidding/doubling"


def bench_douzero(seconds: float):
    try:
        from douzero.env.game import GameEnv
    except ImportError:
        return None
    import random

    random.seed(0)

    class RandomAgent:
        def act(self, infoset):
            return random.choice(infoset.legal_actions)

    players = {p: RandomAgent() for p in ("landlord", "landlord_up", "landlord_down")}
    env = GameEnv(players)
    from agents.douzero.encoding import DOUZERO_CARD
    from ddz_env.cards import DECK_SIZE, HAND_SIZE, MAX_COUNTS, MAX_HAND

    deck0 = np.repeat(DOUZERO_CARD, MAX_COUNTS).tolist()  # DouZero's ints for the 54 cards
    rng = np.random.default_rng(0)
    hands = steps = 0
    t0 = cpu()
    while cpu() - t0 < seconds:
        deck = [deck0[i] for i in rng.permutation(DECK_SIZE)]
        # the landlord's 20 cards: its 17 and the bottom (the last 3 of them)
        data = {"landlord": sorted(deck[:MAX_HAND]), "landlord_up": sorted(deck[MAX_HAND:MAX_HAND + HAND_SIZE]),
                "landlord_down": sorted(deck[MAX_HAND + HAND_SIZE:]),
                "three_landlord_cards": sorted(deck[HAND_SIZE:MAX_HAND])}
        env.card_play_init(data)
        while not env.game_over:
            env.step()
            steps += 1
        env.reset()
        hands += 1
    dt = cpu() - t0
    return hands / dt, steps / dt, "game engine only (no encoding); no bidding/doubling"


def bench_openspiel(seconds: float):
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("dou_dizhu")
    rng = np.random.default_rng(0)
    hands = steps = 0
    t0 = cpu()
    while cpu() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[rng.choice(len(outcomes), p=probs)])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                steps += 1
        hands += 1
    dt = cpu() - t0
    return hands / dt, steps / dt, "C++ game through its Python binding; bidding, no doubling"


# ---------------------------------------------------------------------------- table
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per measurement")
    p.add_argument("--sizes", type=int, nargs="+", default=[64, 1024, 8192], help="batch sizes B")
    p.add_argument("--quick", action="store_true", help="1 s per measurement (a smoke run)")
    a = p.parse_args()
    secs = 1.0 if a.quick else a.seconds
    rows: list[tuple[str, tuple | None, str]] = []
    rows.append(("ddz_env AEC env", bench_aec(secs), ""))
    for B in a.sizes:
        rows.append((f"ddz_env VectorDouDizhu B={B:,}", bench_vector(B, secs), ""))
    for B in a.sizes:
        rows.append((f"ddz_env VectorDouDizhu B={B:,}", bench_vector(B, secs, observe=False), ""))
    rows.append(("RLCard doudizhu env", bench_rlcard(secs), "pip install rlcard"))
    rows.append(("DouZero GameEnv", bench_douzero(secs), "pip install douzero"))
    rows.append(("OpenSpiel dou_dizhu", bench_openspiel(secs), "pip install open_spiel"))

    print(f"Random play, one core, CPU time ({secs:g} s per row); "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")
    head = f"{'engine':<34}{'hands/CPU-s':>13}{'decisions/CPU-s':>17}{'dec/hand':>10}  notes"
    print(head)
    print("-" * len(head))
    for name, res, missing in rows:
        if res is None:
            print(f"{name:<34}{'-':>13}{'-':>17}{'-':>10}  not installed, skipped ({missing})")
            continue
        h, d, note = res
        print(f"{name:<34}{h:>13,.0f}{d:>17,.0f}{d / h if h else float('nan'):>10.1f}  {note}")
    best = max((res[0] for name, res, _ in rows if res and "Vector" in name and "observations on" in res[2]),
               default=0.0)
    print(f"best batched figure with observations: {best:,.0f} hands/s "
          f"({best / OPENSPIEL_REFERENCE:.2f}x the ~{OPENSPIEL_REFERENCE:,} hands/s quoted for OpenSpiel's C++ engine)")


if __name__ == "__main__":
    main()
