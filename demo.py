"""Deal and play seeded hands of Dou Dizhu with random legal actions, printing each hand.

    python demo.py --hands 3 --seed 0 [--spectator]

Cards read as everywhere people read them (``ddz_env.view.spaced``): ``10`` for ten, ``BJ`` / ``RJ`` for the
black and red joker.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents._entry import needs_installed  # noqa: E402 (standard library only: says what to run when a package is missing)

with needs_installed("demo.py", active=__name__ == "__main__"):
    import numpy as np

    from ddz_env.cards import to_string
    from ddz_env.game import Game, Role
    from ddz_env.view import said, spaced


def play_hand(seed: int, spectator: bool = True) -> Game:
    rng = np.random.default_rng(seed + 1_000_003)
    game = Game.deal(seed)
    print(f"== hand seed {seed}: first bidder seat {game.first_bidder}")
    for s in range(3):
        print(f"   seat {s}: {spaced(to_string(game.hands[s]))}")
    print(f"   bottom: {spaced(to_string(game.bottom))}")
    while not game.is_over:
        seat, phase = game.current_player, game.phase.name
        action = int(rng.choice(game.legal_actions()))
        game.step(action)
        print(f"   {phase:<8} seat {seat}: {said(action)}")
    print(table(game, spectator))
    return game


def table(game: Game, spectator: bool) -> str:
    """The finished hand (as ``Game.render`` lays it out), in people's card notation."""
    names = {Role.LANDLORD: "landlord", Role.FARMER_AFTER: "farmer(down)", Role.FARMER_BEFORE: "farmer(up)", -1: "?"}
    lines = [f"bid {game.bid}  landlord {game.landlord}  bombs {game.bombs}  rockets {game.rockets}"]
    for s in range(3):
        doubled = " doubled" if game.doubles_revealed and game.double_choice[s] == 1 else ""
        cards = spaced(to_string(game.hands[s])) if spectator and game.n_cards[s] else ""
        lines.append(f"  seat {s} {names[game.role(s)]:<13} {game.n_cards[s]:>2} cards{doubled}  {cards}".rstrip())
    if game.void:
        lines.append("  void hand: everyone passed, no score")
    else:
        lines.append(f"  winner seat {game.winner}  scores {game.scores.tolist()}" + ("  spring" if game.spring else "")
                     + ("  anti-spring" if game.anti_spring else ""))
    return "\n".join(lines)


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
