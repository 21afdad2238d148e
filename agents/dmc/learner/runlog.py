"""DMC's run log: the CSV log of its columns (:class:`RunLog`) and the learning-curve PNG
(:func:`plot_learning_curve`). Log lines through the progress bar and TensorBoard writers are
:mod:`agents.runs.log` (any trainer's); checkpoint files :mod:`.checkpoint`; evaluation rows
:mod:`.periodic_eval`. The trainer (``trainer.py``) calls these and reads as the algorithm alone.
"""
from __future__ import annotations

import csv
import io
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ddz_env.files import replacing, write_binary

from ...runs.log import log_through_bar, summary_writer
from ..config import NET_NAMES, POSITIONS
from .periodic_eval import read_rows
from .experience import Stats
from ..model import NUM_NETS

log = logging.getLogger("dmc")
#: the learner's choices before play, as shares of its turns (the clearest early signals of learning)
CHOICE_FIELDS = ("bid_pass", "bid_1", "bid_2", "bid_3", "double_rate", "redouble_rate")
CSV_FIELDS = (["time_s", "frames", "updates", "fps"] + [f"loss_{n}" for n in NET_NAMES]
              + [f"return_{p}" for p in POSITIONS] + ["hands", "void_rate", "score_vs_opponents", *CHOICE_FIELDS])
#: log.csv columns that are not TensorBoard scalars
_NOT_SCALARS = ("time_s", "frames")


# ---------------------------------------------------------------------------------------------- logging
def _frames(row: dict) -> int | None:
    """A CSV row's frames, or None for a row cut short (the disk filled while it was written)."""
    try:
        return int(row["frames"])
    except (KeyError, TypeError, ValueError):
        return None


class RunLog:
    """CSV rows of frames, fps, mean loss per network and mean score per position.

    Rows come at fixed frames (``every_frames``: at the first update at or past each
    multiple, so that two runs of one config have their rows at the same frames; wall time is
    the ``time_s`` column), or every ``every_seconds`` when ``every_frames`` is 0. ``fps`` is
    the frames of the row's window over its wall time; a session's first window opens when its
    first batch is there (:meth:`start`), so neither the start-up (actor processes spawning,
    weights loading) nor, after ``--resume``, the frames of the earlier sessions count in it.

    ``resume_frames``: continue the CSV of a resumed run, dropping the rows written after its
    checkpoint (a run killed between checkpoints logged frames it then trains again).

    Every numeric column of a row also goes to TensorBoard (``tensorboard/`` in the run folder,
    tag ``train/<column>``, step = frames) when the ``tensorboard`` package is installed
    (``tensorboard=False``: never); when it is not, one log line says so."""

    def __init__(self, path: Path, resume_frames: int | None = None, every_frames: int = 0,
                 every_seconds: float = 10.0, tensorboard: bool = True):
        self.path = path
        self.tb = summary_writer(path.parent / "tensorboard", log) if tensorboard else None
        self.every_frames = int(every_frames)
        self.every_seconds = float(every_seconds)
        kept = []
        if resume_frames is not None and path.exists():
            with open(path, newline="") as f:
                kept = [r for r in csv.DictReader(f) if _frames(r) is not None and _frames(r) <= resume_frames]
        # the kept rows go through a temporary file (a full disk leaves the old log, not half of it);
        # the rows of this session are appended to it
        with replacing(path) as tmp:
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
                w.writeheader()
                w.writerows(kept)
        self.file = open(path, "a", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=CSV_FIELDS, extrasaction="ignore")
        frames = resume_frames or 0
        self.last_frames = int(kept[-1]["frames"]) if kept else None  # frames of the last row written
        self.next_frames = self._next(frames)
        self.started = False
        self.reset_window(frames)

    def _next(self, frames: int) -> int | None:
        return (frames // self.every_frames + 1) * self.every_frames if self.every_frames else None

    def start(self, frames: int) -> None:
        """The session's experience starts flowing (``frames`` done so far): the fps clock starts here."""
        self.started = True
        self.t0 = time.perf_counter()
        self.f0 = frames

    def reset_window(self, frames: int) -> None:
        self.t0 = time.perf_counter()
        self.f0 = frames
        self.losses = [[] for _ in range(NUM_NETS)]
        self.stats = np.zeros(Stats.SIZE)

    def add(self, losses: list[float], stats: np.ndarray | None) -> None:
        for n, loss in enumerate(losses):
            if not math.isnan(loss):
                self.losses[n].append(loss)
        if stats is not None:
            self.stats += stats

    def due(self, frames: int) -> bool:
        """Is a row due now that ``frames`` are done?"""
        if self.every_frames:
            return frames >= self.next_frames
        return time.perf_counter() - self.t0 >= self.every_seconds

    def write(self, elapsed: float, frames: int, updates: int) -> dict[str, Any]:
        """The row of the window that ends at ``frames`` (written, and returned); a new window opens."""
        dt = max(time.perf_counter() - self.t0, 1e-9)
        hands = self.stats[3]
        row: dict[str, Any] = {"time_s": round(elapsed, 2), "frames": frames, "updates": updates,
                               "fps": round((frames - self.f0) / dt, 1) if frames > self.f0 else ""}
        for n, name in enumerate(NET_NAMES):
            row[f"loss_{name}"] = round(float(np.mean(self.losses[n])), 6) if self.losses[n] else ""
        for p, name in enumerate(POSITIONS):
            row[f"return_{name}"] = round(self.stats[p] / hands, 4) if hands else ""
        row["hands"] = int(hands)
        total = hands + self.stats[4]
        row["void_rate"] = round(self.stats[4] / total, 4) if total else ""
        row["score_vs_opponents"] = round(self.stats[5] / self.stats[6], 4) if self.stats[6] else ""
        c = self.stats[Stats.BIDS:]
        bids = c[:4].sum()
        for k, name in enumerate(CHOICE_FIELDS[:4]):
            row[name] = round(c[k] / bids, 4) if bids else ""
        row["double_rate"] = round(c[5] / c[4], 4) if c[4] else ""
        row["redouble_rate"] = round(c[7] / c[6], 4) if c[6] else ""
        self.writer.writerow(row)
        self.file.flush()
        if self.tb is not None:
            for key, value in row.items():
                if key not in _NOT_SCALARS and value != "":
                    self.tb.add_scalar(f"train/{key}", float(value), frames)
            self.tb.flush()
        self.last_frames = frames
        self.next_frames = self._next(frames)
        self.reset_window(frames)
        return row

    def close(self) -> None:
        self.file.close()
        if self.tb is not None:
            self.tb.close()


def plot_learning_curve(csv_path: Path, png_path: Path) -> bool:
    """Mean score per position and loss per network against frames; False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no learning-curve PNG")
        return False
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    evals = sorted(read_rows(csv_path.parent / "eval.csv"),  # (a point redone after a stop comes later in the file)
                   key=lambda r: int(r["frames"]) if str(r.get("frames", "")).isdigit() else 0)
    panels = 3 + bool(evals)
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4))
    ax1, ax2, ax4 = axes[0], axes[1], axes[-1]

    def series(key):
        pts = [(float(r["frames"]), float(r[key])) for r in rows if r.get(key) not in ("", None)]
        return ([p[0] for p in pts], [p[1] for p in pts])

    for name in POSITIONS:
        ax1.plot(*series(f"return_{name}"), label=name)
    ax1.set_xlabel("frames")
    ax1.set_ylabel("mean score per hand (R19)")
    ax1.axhline(0, color="grey", lw=0.5)
    ax1.legend()
    for name in NET_NAMES:
        ax2.plot(*series(f"loss_{name}"), label=name)
    ax2.set_xlabel("frames")
    ax2.set_ylabel("loss")
    ax2.set_yscale("log")
    ax2.legend()
    if evals:  # score per hand against each evaluation opponent, with the 95% interval
        ax3 = axes[2]
        for key in sorted({(r["opponent"], r["mode"]) for r in evals}):
            pts = [r for r in evals if (r["opponent"], r["mode"]) == key and r["score"] != ""]
            x = [float(r["frames"]) for r in pts]
            ax3.plot(x, [float(r["score"]) for r in pts], marker=".", label=f"vs {key[0]} ({key[1]})")
            if all(r["ci_lo"] != "" for r in pts):
                ax3.fill_between(x, [float(r["ci_lo"]) for r in pts], [float(r["ci_hi"]) for r in pts], alpha=0.2)
        ax3.axhline(0, color="grey", lw=0.5)
        ax3.set_xlabel("frames")
        ax3.set_ylabel("score per hand (evaluation, 95% CI)")
        ax3.legend(fontsize=8)
    # the learner's choices before play: void hands fall as it learns to bid, the bid levels and
    # doubling rates show whether the bidding network uses the stakes
    for key, label in (("void_rate", "void hands"), ("bid_pass", "bid: pass"), ("bid_1", "bid 1"),
                       ("bid_2", "bid 2"), ("bid_3", "bid 3"), ("double_rate", "double"),
                       ("redouble_rate", "redouble")):
        x, y = series(key) if rows and key in rows[0] else ([], [])
        if x:
            ax4.plot(x, y, label=label, ls="--" if key == "void_rate" else "-")
    ax4.set_ylim(-0.02, 1.02)
    ax4.set_xlabel("frames")
    ax4.set_ylabel("share of the learner's turns (void: of hands)")
    ax4.legend(fontsize=8)
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    for ax in axes:  # frames in millions, a few ticks: labels that do not collide
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1e6:g}M"))
    fig.suptitle(png_path.parent.name)
    fig.tight_layout()
    buf = io.BytesIO()  # (drawn in memory: PIL opens a named file "w+b", which a FIFO could not take)
    fig.savefig(buf, dpi=100, format="png")
    write_binary(png_path, lambda f: f.write(buf.getvalue()))  # (a full disk leaves the previous picture, not half)
    plt.close(fig)
    return True


__all__ = ["CSV_FIELDS", "CHOICE_FIELDS", "RunLog", "log_through_bar", "plot_learning_curve"]
