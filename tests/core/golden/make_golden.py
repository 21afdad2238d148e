"""Write (or check) the golden playthrough: a few seeded hands, step by step.

    python tests/core/golden/make_golden.py            # rewrite tests/core/golden/playthrough.txt
    python tests/core/golden/make_golden.py --check    # exit 1 with a diff if the rules or planes changed

Each line is one decision: hand and step, the seat to act, the phase, the legal ids (listed when
there are at most 12, else their count and a digest), a digest of the acting seat's observation
planes, and the action taken. Each hand ends with its scores and R19 breakdown and the digests of
all three seats' final planes. The actions come from a fixed formula over the legal list (no random
generator), and the hands cover a void hand, a redoubled hand, a plain bidding hand and the
fixed-landlord setting without doubling, so a change to the rules, the legal sets or the
observation planes shows up as a diff in review (tests/core/test_golden.py).
"""
from __future__ import annotations

import difflib
import hashlib
import sys
from pathlib import Path

import numpy as np

from ddz_env.actions import BID_1, BID_2, BID_3, BID_PASS, DOUBLE, NO_DOUBLE, NO_REDOUBLE, REDOUBLE, action_to_string
from ddz_env.game import Game, Phase
from ddz_env.observation import observe_game
from ddz_env.rules import Rules
from ddz_env.record import record_of

PATH = Path(__file__).with_name("playthrough.txt")

# (deal seed, first bidder, fixed landlord, doubling, scripted bids/doubles: phase -> action ids in order)
HANDS = [
    ("void: all three pass", 11, 0, None, True, {Phase.BID: [BID_PASS, BID_PASS, BID_PASS]}),
    ("redoubled: bid 3, both farmers double, the landlord redoubles", 12, 1, None, True,
     {Phase.BID: [BID_3], Phase.DOUBLE: [DOUBLE, DOUBLE], Phase.REDOUBLE: [REDOUBLE]}),
    ("bids 1, 2, pass; no doubles", 13, 2, None, True,
     {Phase.BID: [BID_1, BID_2, BID_PASS], Phase.DOUBLE: [NO_DOUBLE, NO_DOUBLE]}),
    ("one farmer doubles, no redouble", 14, 0, None, True,
     {Phase.BID: [BID_PASS, BID_2, BID_PASS], Phase.DOUBLE: [NO_DOUBLE, DOUBLE], Phase.REDOUBLE: [NO_REDOUBLE]}),
    ("fixed landlord, no doubling (the DouZero/RLCard setting)", 15, 2, 2, False, {}),
]


def digest(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]


def choose(legal: np.ndarray, step: int, hand: int) -> int:
    """The play-phase choice: a fixed formula over the sorted legal ids (no generator)."""
    return int(legal[(step * 7 + hand * 3) % legal.size])


def playthrough() -> tuple[str, list[list[tuple[int, int]]]]:
    """The golden text, and each hand's (seat, action) list."""
    lines = ["# golden playthrough: regenerate with python tests/core/golden/make_golden.py (see its docstring)"]
    histories = []
    for h, (title, seed, first, landlord, doubling, script) in enumerate(HANDS):
        rules = Rules(bidding=landlord is None, doubling=doubling)
        game = Game.deal(seed, first_bidder=first, rules=rules, landlord=landlord)
        lines.append(f"hand {h}: {title} (Game.deal({seed}, first_bidder={first}, rules={rules.name!r}, "
                     f"landlord={landlord}))")
        rec = record_of(game)
        lines.append(f"  deal {' '.join(rec['deal']['hands'])} bottom {rec['deal']['bottom']}")
        queue = {p: list(v) for p, v in script.items()}
        step = 0
        while not game.is_over:
            legal = game.legal_actions()
            seat = game.current_player
            planes = observe_game(game, seat)
            if game.phase in queue and queue[game.phase]:
                a = queue[game.phase].pop(0)
            else:
                a = choose(legal, step, h)
            shown = " ".join(map(str, legal.tolist())) if legal.size <= 12 else f"n={legal.size} {digest(legal)}"
            lines.append(f"  {h}.{step:03d} seat {seat} {game.phase.name:<8} legal [{shown}] planes {digest(planes)} "
                         f"-> {a} ({action_to_string(a)})")
            game.step(a)
            step += 1
        r = record_of(game)["result"]
        lines.append(f"  end: scores {r['scores']} winner {r['winner']} landlord {r['landlord']} void {r['void']} "
                     f"bid {r['bid']} doubled {r['doubled']} redoubled {r['redoubled']} bombs {r['bombs']} "
                     f"rockets {r['rockets']} spring {r['spring']} anti_spring {r['anti_spring']} "
                     f"exponents {r['exponents']}")
        lines.append("  final planes " + " ".join(digest(observe_game(game, s)) for s in range(3)))
        histories.append(list(game.history))
    return "\n".join(lines) + "\n", histories


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text, _ = playthrough()
    if "--check" in argv:
        old = PATH.read_text() if PATH.exists() else ""
        if old == text:
            print(f"{PATH.name}: unchanged")
            return 0
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(PATH), "now"))
        return 1
    PATH.write_text(text)
    print(f"wrote {PATH} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
