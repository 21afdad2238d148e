"""Head-to-head evaluation of two agents on the same seeded deals.

    ddz-evaluate --a rule --b random --deals 2000 --seed 0 [--workers 4] [--out results.json]
    ddz-evaluate --a rule --b random --deals 2000 --mode fixed-landlord
    ddz-evaluate --a runs/<run>/ --b rule
    ddz-evaluate --league random rule pretrained runs/<run>@4000000 --deals 500 [--out league.json]

(``python evaluate.py`` in a clone, or ``python -m agents.cli.evaluate``, are the same
program.) An agent is ``random``, ``rule``, ``pretrained``, a run folder, the path of a
checkpoint, or ``douzero:DIR``: DouZero's networks (DIR holds its landlord.ckpt,
landlord_up.ckpt, landlord_down.ckpt). DouZero has no bidding or doubling: with them on, a
bidder agent makes those decisions, ``rule`` by default, another with
``douzero:DIR?bidder=SPEC`` (e.g. ``douzero:baselines/douzero_ADP?bidder=random``).

    ddz-evaluate --a pretrained --b douzero:baselines/douzero_ADP --mode fixed-landlord

Duplicate mode (default) plays every deal under the six seatings AAB ABA BAA
BBA BAB ABB, with bidding and doubling; fixed-landlord mode (bidding and doubling off) plays A as landlord against B,
then the sides swapped, as DouZero and RLCard do. Prints a summary table; ``--out``
writes every figure as JSON. The same seed and agents give the same numbers with any
``--workers``. The function behind it: ``from agents import evaluate``.

Score per hand of an agent: the sum of the rulebook scores of the seats it holds in a
hand, averaged over all hands; B's is minus A's. Its 95% interval treats each deal's
mean over its seatings as one sample (Student's t over deals).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from agents._entry import command_line, needs_installed, plain

with needs_installed("python -m agents.cli.evaluate", "agents.cli.evaluate", active=__name__ == "__main__"):
    from ddz_env.files import folder_problem, output_problem, write_failure, write_text
    from ddz_env.rules import Rules

    from agents.evaluation.arena import AgentError
    from agents.evaluation.metrics import pct as _pct
    from agents.evaluation.metrics import table_rows
    from agents.evaluation.protocols import MODES, ReplayWriteError, evaluate
    from agents.runs.stop import StopSignals, Terminated, exit_status


def format_table(res: dict) -> str:
    """The summary table printed on stdout."""
    cfg = res["config"]
    lines = [f"{cfg['a']} (A) vs {cfg['b']} (B): {res['deals']} deals, {res['hands']} hands, mode {cfg['mode']}, "
             f"seed {cfg['seed']}"]
    head = f"{'':<24}{'A':>26}{'B':>26}"
    lines.append(head)
    lines.append("-" * len(head))
    for m in table_rows(cfg["mode"]):  # the rows: the metric catalogue (agents/evaluation/metrics.py)
        lines.append(f"{m.label:<24}{m.show(res['A']):>26}{m.show(res['B']):>26}")
    lines.append("-" * len(head))
    lines.append(f"void hands {_pct(res['void_rate']).strip()}   spring {_pct(res['spring_rate']).strip()}   "
                 f"anti-spring {_pct(res['anti_spring_rate']).strip()}")
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str = "ddz-evaluate") -> int:
    first, _, rest = plain(__doc__).partition("\n")  # the title once, the rest of the doc page after the options
    p = argparse.ArgumentParser(prog=prog, description=first,
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=rest.strip("\n"))
    from agents.loader import SPEC_KINDS  # (the kinds of spec every program's help lists, in one string)

    p.add_argument("--a", help=f"agent A: {SPEC_KINDS}")
    p.add_argument("--b", help="agent B: any spec --a takes")
    p.add_argument("--deals", type=int, default=2000, help="number of seeded deals (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    p.add_argument("--mode", choices=MODES, default="duplicate", help="duplicate (default) or fixed-landlord")
    p.add_argument("--workers", type=int, default=1, help="parallel processes (same numbers as one)")
    p.add_argument("--rules", default="rulebook",
                   help='duplicate mode\'s rules: rulebook (default), douzero (no bidding, no doubling) or fields such as doubling=false; fixed-landlord mode always plays douzero')
    p.add_argument("--out", help="write every figure to this JSON file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--save-replays", metavar="DIR",
                   help="save every hand as a hand record (JSON) in DIR; open them with python -m agents.play.web --replays DIR")
    p.add_argument("--league", nargs="+", metavar="AGENT",
                   help="instead of --a/--b: every pair of these agents (any spec --a takes) plays duplicate on the same deals; ratings "
                        "and a score matrix (RUN@N: a run's kept checkpoints every N frames; agents/evaluation/league.py)")
    a = p.parse_args(argv)
    if a.league is not None:  # the league (agents/cli/league.py)
        from agents.cli.league import run_league

        return run_league(p, a, argv)
    if a.a is None or a.b is None:
        p.error("--a and --b are required (or --league A B C ...)")
    if a.deals < 1:
        p.error(f"--deals must be at least 1, got {a.deals}")
    if a.workers < 1:
        p.error(f"--workers must be at least 1, got {a.workers}")
    if a.seed < 0:
        p.error(f"--seed must be non-negative, got {a.seed}")
    if a.out:  # check where the results go before the evaluation, not after it (a stream such as /dev/null or a
        problem = output_problem(a.out)  # FIFO is written in place, a link leads to the file it names: ddz_env.files)
        if problem is not None:
            p.error(f"--out {a.out!r}: {problem}")
    if a.save_replays:
        problem = folder_problem(a.save_replays)
        if problem is not None:
            p.error(f"--save-replays {a.save_replays!r}: {problem}; give a folder that can be written")
    try:
        Rules.of(a.rules)
    except (TypeError, ValueError) as e:
        p.error(f"--rules: {e}")
    t0 = time.perf_counter()
    try:
        with StopSignals():  # SIGTERM as Ctrl-C: the workers are ended, one line, exit 143 (130 after Ctrl-C)
            res = evaluate(a.a, a.b, deals=a.deals, seed=a.seed, mode=a.mode, workers=a.workers,
                           rules=a.rules, progress=not a.no_progress and sys.stderr.isatty(),
                           replay_dir=a.save_replays)
    except AgentError as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        partial = getattr(e, "partial", None)
        if partial is not None:
            print(f"before the error, {partial['deals']} deals were played in every seating:", file=sys.stderr)
            print(format_table(partial), file=sys.stderr)
        if a.out:
            try:
                _write_json(a.out, {"error": str(e), "completed_hands": int(len(e.records)), "partial": partial})
            except OSError as w:
                print(f"{p.prog}: error: writing --out {a.out} failed ({write_failure(w)}): {a.out} was left as "
                      f"it was", file=sys.stderr)
            else:
                print(f"wrote {a.out} (the error and the partial results)", file=sys.stderr)
        return 1
    except ReplayWriteError as e:  # every hand was played: the figures are complete and shown
        res, replay_error = e.result, str(e)
    except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # a worker process died
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated)
        kept = (f"; the hand records already in {a.save_replays} are complete, each one" if a.save_replays else "")
        what = "stopped by SIGTERM" if isinstance(e, Terminated) else "interrupted"
        print(f"\n{p.prog}: {what}: no figures{kept}", file=sys.stderr)
        return exit_status(e)
    else:
        replay_error = None
    dt = time.perf_counter() - t0
    res["elapsed_s"] = round(dt, 3)
    res["command"] = command_line(p.prog, sys.argv[1:] if argv is None else argv)
    if replay_error is not None:
        res["replay_error"] = replay_error
    print(format_table(res))
    print(f"{res['hands']} hands in {dt:.1f} s ({res['hands'] / dt:,.0f} hands/s, {a.workers} worker(s))")
    failed = False
    if a.out:
        try:
            _write_json(a.out, res)
        except OSError as e:
            print(f"{p.prog}: error: writing --out {a.out} failed ({write_failure(e)}): the figures above are "
                  f"complete; {a.out} was left as it was (write them elsewhere with --out)", file=sys.stderr)
            failed = True
        else:
            print(f"wrote {a.out}")
    if replay_error is not None:
        print(f"{p.prog}: error: --save-replays: {replay_error}; the figures above are complete: free space (or "
              f"choose another folder) and run again to save every record", file=sys.stderr)
        failed = True
    elif a.save_replays:
        print(f"saved {res['hands']} hand records in {a.save_replays}")
    return 1 if failed else 0


def _write_json(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` through a temporary file (a failed write leaves no half file); a stream (``/dev/null``,
    a FIFO) is written in place, a link is followed, never replaced (:mod:`ddz_env.files`)."""
    write_text(path, json.dumps(data, indent=1))


if __name__ == "__main__":
    with needs_installed("python -m agents.cli.evaluate", "agents.cli.evaluate"):
        sys.exit(main(prog="python -m agents.cli.evaluate"))
