"""Play Dou Dizhu in the terminal against any agents.

    python -m agents.play --vs rule                 # you in seat 0, the rule agent in seats 1 and 2
    python -m agents.play --vs rule,pretrained --seat 2 --seed 7 --deals 3

You see only your seat's information (your cards, the public history, cards left per seat,
the bottom once revealed). Cards read ``10`` for ten and ``BJ``/``RJ`` for the black and red
joker, as on the web page. Type cards in any order (``10`` or ``T``, ``BJ`` or ``B``, lower case
is fine), ``pass``, a bid ``1``/``2``/``3``, ``double``/``no``, ``redouble``/``no``. Also: ``help``
(your legal moves), ``auto`` (R20's timeout action plays for you), ``quit``. A typo gets a
did-you-mean (``pas``: did you mean 'pass'?), an illegal move what you tried and what the table
needs, in words (``agents.play.explain``), then a new prompt; so does a line that is not text in
the terminal's encoding. Each hand's record
(``ddz_env.record``) is saved to ``--save-dir``, finished or not: after ``quit``, the end of the
input or Ctrl-C too (which then exits with status 130). ``--save-dir`` is checked before the
first hand, and a record that cannot be written is one ``error:`` line (``ddz-play: error: ...``).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from ddz_env.actions import phase_of
from ddz_env.files import folder_problem, write_failure
from ddz_env.game import IllegalActionError
from ddz_env.record import save
from ddz_env.rules import Rules

from .._entry import plain
from ..loader import SPEC_KINDS
from .explain import NOTHING_BEATS_IT
from .match import Match, said, spaced

#: the terminal's own words besides moves (for the did-you-mean of a typo)
COMMANDS = ("help", "quit", "auto")


def _said(h: dict) -> str:
    """A history entry of the view in people's words (``7 8 9 10 J``, ``no bid``, ``chose (secret)``)."""
    return h["text"]


def _flags(view: dict, s: int) -> str:
    """What seat ``s`` said in the bidding and doubling: ``bid 2``, ``no bid, doubled``, ``redoubled``."""
    flags = []
    if view["bids"][s] >= 0:
        flags.append("no bid" if view["bids"][s] == 0 else f"bid {view['bids'][s]}")
    if view["doubled"][s]:
        flags.append("doubled")
    if s == view["landlord"] and view["redoubled"]:
        flags.append("redoubled")
    return ", ".join(flags)


def _recent(view: dict) -> list[dict]:
    """The ``last:`` line's entries: the current phase's latest, at most one per seat (the play's moves in the play
    and once the hand is over; the bids and doubles are each seat's flags)."""
    phase = view["phase"]
    same = ("BID",) if phase == "BID" else ("DOUBLE", "REDOUBLE") if phase in ("DOUBLE", "REDOUBLE") else ("PLAY",)
    return [h for h in view["history"] if h["phase"] in same][-3:]


def render(view: dict, title: str = "") -> str:
    """A seat's view as a few lines of text."""
    me = view["seat"]
    lines = [f"-- {title}phase {view['phase']} --"]
    for s in range(3):
        name = "you" if s == me else view["players"][s]
        role = view["roles"][s] or ""
        turn = "*" if s == view["to_act"] else " "
        lines.append(f"{turn} seat {s} {name:<12} {role:<9} {view['cards_left'][s]:>2} "
                     f"{'card ' if view['cards_left'][s] == 1 else 'cards'}  {_flags(view, s)}".rstrip())
        if s != me and view["hands"][s] is not None:
            lines.append(f"      cards: {spaced(view['hands'][s])}")
    if view["bottom"] is not None:
        lines.append(f"  bottom: {spaced(view['bottom'])}")
    if view["stake"] is not None and not view["over"]:
        lines.append(f"  stake: {view['stake']['text']}")
    recent = _recent(view)
    if recent:
        lines.append("  last: " + ", ".join(f"seat {h['seat']} {_said(h)}" for h in recent))
    if view["to_beat"] is not None:
        only_pass = view["your_turn"] and view["legal"] == ["pass"]
        lines.append(f"  to beat: {spaced(view['to_beat']['cards'])} (seat {view['to_beat']['seat']})"
                     + (f"; {NOTHING_BEATS_IT}" if only_pass else ""))
    elif view["phase"] == "PLAY" and view["your_turn"]:
        lines.append("  you lead")
    if me is not None and view["hands"][me] is not None:
        lines.append(f"  your cards: {spaced(view['hands'][me])}")
    if view["over"]:
        r = view["result"]
        if r["void"]:
            lines.append("  void hand: everyone passed (R4), no score")
        else:
            lines.append(f"  seat {r['winner']} went out; scores {r['scores']}")
            lines.append(f"  {view['outcome']['line']}")
    return "\n".join(lines)


def _prompt(view: dict) -> str:
    p = view["phase"]
    return {"BID": "bid (1/2/3 or pass)> ", "DOUBLE": "double? (double/no)> ",
            "REDOUBLE": "redouble? (redouble/no)> "}.get(p, "your move (cards or pass)> ")


def play_hand(match: Match, seat: int, read: Callable[[str], str], write: Callable[[str], None],
              title: str = "") -> bool:
    """Play one hand with a person at ``seat``; ``False`` if the person quit or input ended."""
    def show_agents(actions):
        for s, a in actions:
            write(f"  seat {s} ({match.names[s]}): {_public(match, s, a)}")

    show_agents(match.advance())
    while not match.game.is_over:
        view = match.view(seat)
        write(render(view, title))
        while True:
            try:
                text = read(_prompt(view))
            except EOFError:
                write("input ended: the hand stops here")
                return False
            except UnicodeDecodeError as e:  # (input() of bytes the locale cannot decode: the line is dropped)
                write(f"  that line is not {e.encoding} text: type it again")
                continue
            t = text.strip().lower()
            if t in ("help", "?", "h"):
                legal = view["legal"]
                more = f" ... ({len(legal)} in all)" if len(legal) > 40 else ""
                cards = view["phase"] == "PLAY"
                shown = [spaced(x) if cards and x != "pass" else {"bid pass": "pass"}.get(x, x) for x in legal[:40]]
                write(f"  {NOTHING_BEATS_IT}" if cards and legal == ["pass"] else "  legal: " + ", ".join(shown) + more)
                continue
            if t in ("quit", "exit", "q"):
                write("you quit: the hand stops here")
                return False
            try:
                a = match.game.default_action() if t == "auto" else text
                done = match.play(seat, a, words=COMMANDS)
            except (ValueError, IllegalActionError) as e:
                write(f"  {e}")
                continue
            write(f"  you: {said(done)}")
            break
        show_agents(match.advance())
    write(render(match.view(seat), title))
    return True


def _public(match: Match, seat: int, action: int) -> str:
    if phase_of(action) == "DOUBLE" and not match.game.doubles_revealed:
        return "chose (secret until both farmers have chosen)"
    return said(action)


def _tolerant_stdin() -> None:
    """Read bytes the locale cannot decode as U+FFFD: such a line is then a typo with a message and
    a new prompt, where ``input()`` would raise ``UnicodeDecodeError`` and lose what was buffered."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


def main(argv=None, read: Callable[[str], str] = input, write: Callable[[str], None] = print,
         prog: str = "ddz-play") -> int:
    """The program; its exit status. ``prog``: its name in its usage and error lines, as typed (``ddz-play``, or
    ``python -m agents.play`` from ``__main__``)."""
    ap = argparse.ArgumentParser(prog=prog, description=plain(__doc__.split("\n\n")[0]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=plain(__doc__))
    ap.add_argument("--vs", default="rule",
                    help="the other seats' agents: one spec for both or two comma-separated (next seat first), "
                         f"each {SPEC_KINDS} (default: rule)")
    ap.add_argument("--seat", type=int, default=0, choices=(0, 1, 2), help="your seat (default 0)")
    ap.add_argument("--seed", type=int, default=0, help="deal seed, 0 or more (deals are evaluate.py's deals of this seed)")
    ap.add_argument("--deals", type=int, default=1, help="hands to play (default 1)")
    ap.add_argument("--rules", default="rulebook", help='rules of the hands: rulebook (default), douzero (no bidding, no doubling) or fields such as doubling=false')
    ap.add_argument("--save-dir", default="hands", help="folder for the hand records (default: hands/)")
    args = ap.parse_args(argv)

    def error(text: str) -> None:  # one line naming the program, on stderr as argparse's (``write`` when given one)
        line = f"{ap.prog}: error: {text}"
        if write is print:
            print(line, file=sys.stderr)
        else:
            write(line)

    if args.deals < 1:
        ap.error("--deals must be at least 1")
    if args.seed < 0:
        ap.error(f"--seed must be 0 or more, got {args.seed}")
    problem = folder_problem(args.save_dir)  # before the hand is played, not when its record is saved
    if problem is not None:
        ap.error(f"--save-dir {args.save_dir!r}: {problem}; give a folder that can be written")
    try:
        rules = Rules.of(args.rules)
    except (TypeError, ValueError) as e:
        ap.error(f"--rules: {e}")
    from ..loader import load

    specs = [x.strip() for x in args.vs.split(",") if x.strip()]
    if len(specs) == 1:
        specs = specs * 2
    if len(specs) != 2:
        ap.error(f"--vs takes one agent or two comma-separated, got {args.vs!r}")
    cache = {}
    try:
        for sp in specs:
            if sp not in cache:
                cache[sp] = load(sp)
    except (ValueError, FileNotFoundError, TypeError, ImportError) as e:  # ImportError: torch missing, the extra named
        error(str(e))
        return 2
    others = [(args.seat + 1) % 3, (args.seat + 2) % 3]
    agents: list = [None, None, None]
    names = ["you", "you", "you"]
    for s, sp in zip(others, specs):
        agents[s], names[s] = cache[sp], sp
    if read is input:
        _tolerant_stdin()
    try:
        os.makedirs(args.save_dir, exist_ok=True)
    except OSError as e:
        error(f"--save-dir {args.save_dir}: cannot create it ({write_failure(e)})")
        return 2
    totals = [0, 0, 0]
    for i in range(args.deals):
        match = Match.deal(agents, names, seed=args.seed, index=i, rules=rules)
        write(f"\n=== hand {i + 1} of {args.deals} (seed {args.seed}, deal {i}); you are seat {args.seat} ===")
        interrupted = False
        try:
            finished = play_hand(match, args.seat, read, write, title=f"hand {i + 1} · ")
        except KeyboardInterrupt:  # Ctrl-C at a prompt or while an agent thinks: keep the hand as it stands
            write("\ninterrupted: the hand stops here")
            finished, interrupted = False, True
        path = os.path.join(args.save_dir, f"hand-seed{args.seed}-deal{i}-seat{args.seat}.json")
        try:
            save(match.record({"human_seat": args.seat}), path)
        except OSError as e:
            before = f"the records of hands 1-{i} in {args.save_dir} are intact; " if i else ""
            error(f"could not save the record of hand {i + 1} to {path} ({write_failure(e)}): nothing was "
                  f"written there; {before}free space or choose another --save-dir to keep the next hands")
            return 1
        write(f"record saved: {path}")
        if interrupted:
            return 130
        if not finished:
            return 0
        totals = [t + int(x) for t, x in zip(totals, match.game.scores)]
        write(f"your total after {i + 1} hand(s): {totals[args.seat]:+d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
