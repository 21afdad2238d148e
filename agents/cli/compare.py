"""Overlay the curves of two or more training runs in one PNG.

    ddz-compare runs/default-A runs/default-B [--labels A B] [--out compare.png]

(``python -m agents.cli.compare`` is the same program.) Each argument is a run folder
(its ``log.csv``, and ``eval.csv`` when the run evaluated). The panels share the frames
axis: the evaluation score per hand against each evaluation opponent with its 95%
interval (one panel per opponent and mode); the learner's score against its training
opponents; the void rate and the share of bid 3; the mean loss of the three play
networks; frames per second. A run that lacks a column leaves it out of that panel.
For TensorBoard instead: ``tensorboard --logdir runs/`` (every ``log.csv`` column is a
``train/...`` scalar of each run when the ``tensorboard`` package is installed).
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from .._entry import install_extra, needs_installed, plain

#: (panel title, log.csv columns drawn in it) for the training-log panels
LOG_PANELS = (
    ("score vs training opponents (per hand)", ("score_vs_opponents",)),
    ("void rate / bid 3 share", ("void_rate", "bid_3")),
    ("loss, play networks (mean)", ("loss_landlord", "loss_farmer_down", "loss_farmer_up")),
    ("frames per second", ("fps",)),
)


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(x: str | None) -> float | None:
    try:
        return float(x) if x not in ("", None) else None
    except ValueError:
        return None


def read_run(folder: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """``(log rows, eval rows)`` of a run folder; ``ValueError`` naming it when it has no ``log.csv``."""
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a run folder (no such directory)")
    log_rows = _rows(folder / "log.csv")
    if not log_rows:
        raise ValueError(f"{str(folder)!r} has no log.csv rows (is it a training run folder?)")
    return log_rows, _rows(folder / "eval.csv")


def compare(folders: list[Path], labels: list[str], out: Path) -> Path:
    """Draw the runs' curves into ``out`` (PNG); returns it."""
    import matplotlib

    from ddz_env.files import write_binary

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [read_run(f) for f in folders]
    evals = sorted({(r["opponent"], r["mode"]) for _, ev in runs for r in ev})
    n = len(evals) + len(LOG_PANELS)
    cols = min(3, n)
    rows_ = -(-n // cols)
    fig, axes = plt.subplots(rows_, cols, figsize=(5.2 * cols, 3.6 * rows_), squeeze=False)
    flat = [ax for row in axes for ax in row]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (opp, mode) in enumerate(evals):
        ax = flat[k]
        for i, ((_, ev), label) in enumerate(zip(runs, labels)):
            pts = [r for r in ev if (r["opponent"], r["mode"]) == (opp, mode) and _num(r["score"]) is not None]
            if not pts:
                continue
            x = [float(r["frames"]) for r in pts]
            ax.plot(x, [float(r["score"]) for r in pts], marker=".", color=colors[i % len(colors)], label=label)
            if all(_num(r.get("ci_lo")) is not None for r in pts):
                ax.fill_between(x, [float(r["ci_lo"]) for r in pts], [float(r["ci_hi"]) for r in pts],
                                color=colors[i % len(colors)], alpha=0.15)
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_title(f"evaluation vs {opp} ({mode})", fontsize=10)
    for k, (title, keys) in enumerate(LOG_PANELS):
        ax = flat[len(evals) + k]
        for i, ((log_rows, _), label) in enumerate(zip(runs, labels)):
            for j, key in enumerate(() if keys[0].startswith("loss_") else keys):
                pts = [(float(r["frames"]), _num(r.get(key))) for r in log_rows]
                pts = [(x, y) for x, y in pts if y is not None]
                if pts:
                    ax.plot(*zip(*pts), color=colors[i % len(colors)], ls=("-", "--", ":")[j % 3],
                            label=f"{label}: {key}" if len(keys) > 1 else label)
            if keys[0].startswith("loss_"):  # the mean of the play networks' losses
                pts = []
                for r in log_rows:
                    vals = [_num(r.get(key)) for key in keys]
                    if all(v is not None for v in vals):
                        pts.append((float(r["frames"]), sum(vals) / len(vals)))
                if pts:
                    ax.plot(*zip(*pts), color=colors[i % len(colors)], label=label)
        ax.set_title(title, fontsize=10)
    for ax in flat[:n]:
        ax.set_xlabel("frames")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no data in these runs", ha="center", va="center", transform=ax.transAxes,
                    color="grey")
    for ax in flat[n:]:
        ax.axis("off")
    fig.suptitle(" vs ".join(labels), fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()  # (drawn in memory: PIL opens a named file "w+b", which a FIFO could not take)
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    # whole or not at all; a stream (/dev/null, a FIFO) in place, a link followed and kept (ddz_env.files)
    write_binary(out, lambda f: f.write(buf.getvalue()))
    return out


def main(argv: list[str] | None = None, prog: str = "ddz-compare") -> int:
    first, _, rest = plain(__doc__).partition("\n")
    p = argparse.ArgumentParser(prog=prog, description=first, epilog=rest.strip("\n"),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="run folders (two or more)")
    p.add_argument("--labels", nargs="+", help="a label per run (default: the folder names)")
    p.add_argument("--out", default="compare.png", help="the PNG to write (default compare.png)")
    a = p.parse_args(argv)
    if len(a.runs) < 2:
        print(f"{prog}: error: give two or more run folders", file=sys.stderr)
        return 2
    labels = a.labels or [Path(r).resolve().name for r in a.runs]
    if len(labels) != len(a.runs):
        print(f"{prog}: error: {len(labels)} labels for {len(a.runs)} runs", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"{prog}: error: drawing needs matplotlib, part of the 'train' extra: {install_extra('train')}",
              file=sys.stderr)
        return 2
    try:
        out = compare([Path(r) for r in a.runs], labels, Path(a.out))
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{prog}: error: cannot write {a.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    with needs_installed("python -m agents.cli.compare", "agents.cli.compare"):
        sys.exit(main(prog="python -m agents.cli.compare"))
