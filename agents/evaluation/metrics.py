"""The metric catalogue: every figure of a side of an evaluation, named once.

Each :class:`Metric` has its key (the column of ``eval.csv``, the TensorBoard tag ``eval/<opponent>/
<mode>/<key>``), its label (the row of ``evaluate.py``'s table), how to read it from one side of an
:func:`~agents.evaluation.protocols.evaluate` result (``res["A"]``), how to show it, which way is
better, the modes it exists in, and whether it goes to ``eval.csv`` and TensorBoard. ``evaluate.py``'s
table (:func:`agents.cli.evaluate.format_table`), DMC's in-training evaluation rows and their
TensorBoard scalars (``agents/dmc/learner/periodic_eval.py``) and the library learners' ``eval.csv``
(``agents/runs/library.py``) read this table; ``stats.py`` says what each figure means.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

DUPLICATE, FIXED = "duplicate", "fixed-landlord"
BOTH = (DUPLICATE, FIXED)


def pct(x) -> str:
    """A rate as the table shows it (``' 12.5%'``; ``'   -  '`` for none)."""
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def _num(x, fmt: str = "+.3f") -> str:
    return "-" if x is None else format(x, fmt)


def _score(x: dict) -> str:
    lo, hi = x["score_ci95"]
    if lo is None:
        return _num(x["mean_score"])
    return f"{x['mean_score']:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _bids(x: dict) -> str:
    return "/".join("-" if x["landlord_bids"][b] is None else f"{100 * x['landlord_bids'][b]:.0f}%" for b in "123")


@dataclass(frozen=True)
class Metric:
    key: str  # eval.csv column / TensorBoard tag ("" : table only)
    label: str  # evaluate.py's row ("" : not in the table)
    get: Callable[[dict], Any]  # the value from one side of an evaluate() result
    show: Callable[[dict], str]  # the table's cell from that side
    better: str  # "higher", "lower" or "" (a description, not a goal)
    modes: tuple[str, ...] = BOTH
    csv: bool = True  # a column of eval.csv
    tensorboard: bool = False


def _m(key, label, get, kind="pct", better="higher", modes=BOTH, csv=True, tensorboard=False) -> Metric:
    show = {"pct": lambda x: pct(get(x)), "num": lambda x: _num(get(x)), "num3": lambda x: _num(get(x), ".3f")}[kind]
    return Metric(key, label, get, show, better, modes, csv, tensorboard)


#: THE catalogue, in the table's order
METRICS: tuple[Metric, ...] = (
    Metric("score", "score/hand [95% CI]", lambda x: x["mean_score"], _score, "higher", tensorboard=True),
    Metric("ci_lo", "", lambda x: x["score_ci95"][0], _score, "higher"),
    Metric("ci_hi", "", lambda x: x["score_ci95"][1], _score, "higher"),
    # fixed-landlord: DouZero's WP / ADP, each side
    _m("wp_landlord", "WP as landlord", lambda x: x["landlord"]["WP"], modes=(FIXED,), tensorboard=True),
    _m("wp_farmer", "WP as farmers", lambda x: x["farmer"]["WP"], modes=(FIXED,), tensorboard=True),
    _m("", "WP (mean of the two)", lambda x: x["overall"]["WP"], modes=(FIXED,), csv=False),
    _m("", "ADP as landlord", lambda x: x["landlord"]["ADP"], "num", modes=(FIXED,), csv=False),
    _m("", "ADP as farmers", lambda x: x["farmer"]["ADP"], "num", modes=(FIXED,), csv=False),
    _m("", "ADP (mean of the two)", lambda x: x["overall"]["ADP"], "num", modes=(FIXED,), csv=False),
    # duplicate (the full game)
    _m("landlord_share", "landlord share", lambda x: x["landlord_share"], better="", modes=(DUPLICATE,)),
    Metric("", "landlord bid 1/2/3", lambda x: x["landlord_bids"], _bids, "", (DUPLICATE,), csv=False),
    _m("", "win rate as landlord", lambda x: x["win_rate_landlord"], modes=(DUPLICATE,), csv=False),
    _m("", "win rate as farmer", lambda x: x["win_rate_farmer"], modes=(DUPLICATE,), csv=False),
    _m("wp_landlord", "  vs other as landlord", lambda x: x["win_rate_landlord_h2h"], modes=(DUPLICATE,),
       tensorboard=True),
    _m("wp_farmer", "  vs other as farmers", lambda x: x["win_rate_farmer_h2h"], modes=(DUPLICATE,),
       tensorboard=True),
    _m("", "score as landlord", lambda x: x["mean_score_as_landlord"], "num", modes=(DUPLICATE,), csv=False),
    _m("", "score as farmer", lambda x: x["mean_score_as_farmer"], "num", modes=(DUPLICATE,), csv=False),
    _m("bid_pass", "bid pass rate", lambda x: x["bids"]["pass"], better="", modes=(DUPLICATE,), tensorboard=True),
    _m("bid_1", "", lambda x: x["bids"]["1"], better="", modes=(DUPLICATE,)),
    _m("bid_2", "", lambda x: x["bids"]["2"], better="", modes=(DUPLICATE,)),
    _m("bid_3", "", lambda x: x["bids"]["3"], better="", modes=(DUPLICATE,)),
    _m("double_rate", "double rate (farmer)", lambda x: x["double_rate"], better="", modes=(DUPLICATE,),
       tensorboard=True),
    _m("redouble_rate", "redouble rate", lambda x: x["redouble_rate"], better="", modes=(DUPLICATE,),
       tensorboard=True),
    _m("", "bombs per hand", lambda x: x["bombs_per_hand"], "num3", better="", csv=False),
)

#: eval.csv's columns: the row's identity, then the catalogue's columns (each once, in order)
EVAL_ID_FIELDS = ("frames", "time_s", "opponent", "mode", "deals")
EVAL_FIELDS: tuple[str, ...] = EVAL_ID_FIELDS + tuple(dict.fromkeys(m.key for m in METRICS if m.csv and m.key))
#: the keys written to TensorBoard from an eval row
TENSORBOARD_KEYS: tuple[str, ...] = tuple(dict.fromkeys(m.key for m in METRICS if m.tensorboard))


def table_rows(mode: str) -> list[Metric]:
    """The metrics of ``evaluate.py``'s table in ``mode``."""
    return [m for m in METRICS if m.label and mode in m.modes]


def csv_values(side: dict, mode: str, digits: int = 4) -> dict[str, Any]:
    """The ``eval.csv`` columns of one side of an evaluation in ``mode`` (rounded; absent in this mode: left out)."""
    out: dict[str, Any] = {}
    for m in METRICS:
        if m.csv and m.key and mode in m.modes and m.key not in out:
            v = m.get(side)
            out[m.key] = None if v is None else round(float(v), digits)
    return out


__all__ = ["pct", "Metric", "METRICS", "EVAL_FIELDS", "EVAL_ID_FIELDS", "TENSORBOARD_KEYS", "table_rows", "csv_values"]
