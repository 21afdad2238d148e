"""Deal and play seeded hands of Dou Dizhu with random legal actions, printing each hand.

    python demo.py --hands 3 --seed 0 [--spectator]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents._entry import needs_installed  # noqa: E402 (standard library only: says what to run when a package is missing)

with needs_installed("demo.py", active=__name__ == "__main__"):
    import numpy as np

    from ddz_env.actions import action_to_string
    from ddz_env.cards import to_string
    from ddz_env.game import Game


def play_hand(seed: int, spectator: bool = True) -> Game:
    rng = np.random.default_rng(seed + 1_000_003)
    game = Game.deal(seed)
    print(f"== hand seed {seed}: first bidder seat {game.first_bidder}")
    for s in range(3):
        print(f"   seat {s}: {to_string(game.hands[s])}")
    print(f"   bottom: {to_string(game.bottom)}")
    while not game.is_over:
        seat, phase = game.current_player, game.phase.name
        action = int(rng.choice(game.legal_actions()))
        game.step(action)
        print(f"   {phase:<8} seat {seat}: {action_to_string(action)}")
    print(game.render(spectator=spectator))
    return game


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=3, help="number of hands to play")
    p.add_argument("--seed", type=int, default=0, help="seed of the first hand")
    p.add_argument("--spectator", action="store_true", help="show every hand at the end")
    a = p.parse_args()
    if a.hands < 1:
        p.error("--hands must be at least 1")
    totals = np.zeros(3, dtype=np.int64)
    for i in range(a.hands):
        totals += play_hand(a.seed + i, a.spectator).scores
    print(f"total scores per seat after {a.hands} hands: {totals.tolist()}")


if __name__ == "__main__":
    with needs_installed("demo.py"):
        main()
