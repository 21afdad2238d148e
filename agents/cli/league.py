"""``evaluate.py --league A B C ...``: the league's command line (parsed by ``agents.cli.evaluate``;
the league itself is :mod:`agents.evaluation.league`). Prints the ratings table (strongest first) and the
score matrix; ``--out FILE`` writes the JSON and a PNG heatmap next to it (``FILE`` with ``.png``). A stream given as
``FILE`` (``/dev/stdout``, ``/dev/null``, a FIFO) gets the JSON once, in place, and no heatmap: nothing is "next to"
a stream (:mod:`ddz_env.files`: outputs that are not ours are never replaced).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from ddz_env.files import output_problem, write_failure, write_text, written_in_place
from ddz_env.rules import Rules

from agents._entry import command_line, install_extra
from agents.evaluation.league import LeagueResult, LeagueStopped, play_league, save_heatmap
from agents.runs.stop import EXIT_INTERRUPTED, EXIT_TERMINATED, StopSignals, Terminated, exit_status


def heatmap_path(out: str) -> str:
    """Where the PNG of ``--out FILE`` goes: ``FILE`` with its extension replaced by ``.png``."""
    return os.path.splitext(out)[0] + ".png"


def format_league(res: LeagueResult) -> str:
    """The ratings table and the score matrix, strongest first."""
    order = res.order
    n = len(order)
    width = max(len("agent"), *(len(x) for x in res.labels))
    lines = [f"League: {n} agents, {len(res.pairs)} pairs, {res.deals} deals each in duplicate "
             f"({res.deals * 6} hands per pair), seed {res.seed}, rules {res.rules}",
             f"rating: score per hand against the field (least squares on per-deal duplicate margins, "
             f"ratings sum to 0); 95% CI: paired bootstrap over deals ({res.bootstrap} replicates)"]
    head = f"{'rank':>4}  {'agent':<{width}}  {'rating':>7}  {'95% CI':<18}  {'rank 95%':>8}"
    lines += [head, "-" * len(head)]
    for k, i in enumerate(order):
        lines.append(f"{k + 1:>4}  {res.labels[i]:<{width}}  {res.ratings[i]:+7.3f}  "
                     f"[{res.ratings_lo[i]:+.3f}, {res.ratings_hi[i]:+.3f}]  "
                     f"{f'{res.rank_lo[i]}-{res.rank_hi[i]}':>8}")
    lines.append("")
    lines.append("score per hand of the row agent against the column agent (+- half the 95% CI):")
    cell = 15
    lines.append(f"{'':>4}  {'':<{width}}" + "".join(f"{k + 1:>{cell}}" for k in range(n)))
    for k, i in enumerate(order):
        cells = []
        for j in order:
            if i == j:
                cells.append(f"{'.':>{cell}}")
                continue
            m, lo, hi = res.matrix[i, j], res.matrix_lo[i, j], res.matrix_hi[i, j]
            text = f"{m:+.3f}" if lo != lo else f"{m:+.3f}+-{(hi - lo) / 2:.3f}"  # (lo != lo: NaN, one deal)
            cells.append(f"{text:>{cell}}")
        lines.append(f"{k + 1:>4}  {res.labels[i]:<{width}}" + "".join(cells))
    return "\n".join(lines)


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def run_league(p: argparse.ArgumentParser, a: argparse.Namespace, argv: list[str] | None) -> int:
    """Check the options, play the league, print and write it; 0, 1 (an agent failed) or 2 (bad input)."""
    given = [opt for opt, value in (("--a", a.a), ("--b", a.b), ("--save-replays", a.save_replays)) if value]
    if given:
        return _fail(p.prog, f"--league plays every pair of the agents it lists: drop {', '.join(given)}")
    if a.mode != "duplicate":
        return _fail(p.prog, f"--league plays duplicate only, got --mode {a.mode}")
    for name, value, least in (("--deals", a.deals, 1), ("--workers", a.workers, 1), ("--seed", a.seed, 0)):
        if value < least:
            return _fail(p.prog, f"{name} must be at least {least}, got {value}")
    png = None
    if a.out:  # check where the results go before the league, not after it
        problem = output_problem(a.out)
        if problem is not None:
            return _fail(p.prog, f"--out {a.out!r}: {problem}")
        if not written_in_place(a.out):  # (a stream gets the JSON alone: /dev/null.png is no place for a heatmap)
            png = heatmap_path(a.out)
            if os.path.abspath(png) == os.path.abspath(a.out):
                return _fail(p.prog, f"--out {a.out!r}: the heatmap goes to FILE with .png; give a .json path")
    try:
        Rules.of(a.rules)
    except (TypeError, ValueError) as e:
        return _fail(p.prog, f"--rules: {e}")
    t0 = time.perf_counter()
    command = command_line(p.prog, sys.argv[1:] if argv is None else argv)
    try:
        with StopSignals():  # SIGTERM as Ctrl-C: the finished pairs kept, the workers ended, exit 143 (130 after Ctrl-C)
            res = play_league(a.league, deals=a.deals, seed=a.seed, workers=a.workers, rules=a.rules,
                              progress=not a.no_progress and sys.stderr.isatty(),
                              announce=lambda line: print(line, flush=True))
    except LeagueStopped as e:  # what was played is kept: the finished pairs, marked partial, never a heatmap
        kept = ""
        if a.out:
            data = e.to_json()
            data["config"].update({"league": list(a.league), "workers": a.workers})
            data["command"] = command
            try:
                write_text(a.out, json.dumps(data, indent=1))
                kept = f"; the {len(e.pairs)} finished pair(s) are in {a.out} (marked partial)"
            except OSError as w:
                kept = f"; the finished pairs could not be written to {a.out}: {write_failure(w)}"
        print(f"{p.prog}: {e.reason}{kept}", file=sys.stderr)
        return EXIT_TERMINATED if e.terminated else EXIT_INTERRUPTED if e.interrupted else 1
    except (ValueError, FileNotFoundError, TypeError, ImportError) as e:
        return _fail(p.prog, str(e))
    except KeyboardInterrupt as e:  # before the first pair (the agents loading): nothing was played
        what = "stopped by SIGTERM" if isinstance(e, Terminated) else "interrupted"
        print(f"\n{p.prog}: {what} before the first pair: no figures", file=sys.stderr)
        return exit_status(e)
    dt = time.perf_counter() - t0
    print(format_league(res))
    hands = len(res.pairs) * res.deals * 6
    print(f"{hands} hands in {dt:.1f} s ({hands / dt:,.0f} hands/s, {a.workers} worker(s))")
    if a.out:
        data = res.to_json()
        data["config"].update({"league": list(a.league), "workers": a.workers})
        data["elapsed_s"] = round(dt, 3)
        data["command"] = command
        data["png"] = None
        try:  # the JSON first, whole or not at all: a heatmap never stands without its figures
            write_text(a.out, json.dumps(data, indent=1))
        except OSError as e:
            print(f"{p.prog}: error: the league's figures (printed above) could not be written to {a.out}: "
                  f"{write_failure(e)}", file=sys.stderr)
            return 1
        if png is None:  # a stream: written once, in place; no file beside it
            print(f"wrote {a.out} (no PNG heatmap beside a stream)")
            return 0
        try:
            drawn = save_heatmap(res, png)
            if drawn:
                data["png"] = png
                write_text(a.out, json.dumps(data, indent=1))
        except OSError as e:
            if os.path.isfile(png) and not os.path.islink(png):  # (an older heatmap never stands beside new figures;
                with contextlib.suppress(OSError):               # a link or a stream is not ours to remove)
                    os.unlink(png)
            print(f"{p.prog}: warning: no heatmap ({write_failure(e)}); {a.out} has every figure", file=sys.stderr)
            return 0
        print(f"wrote {a.out}" + (f" and {png}" if data["png"] else
                                  f" (no PNG heatmap: matplotlib is missing, {install_extra('train')})"))
    return 0


__all__ = ["run_league", "format_league", "heatmap_path"]
