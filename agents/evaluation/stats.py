"""Figures of an evaluation from its hand records (``arena.FIELDS`` rows), for agent A and B.

Definitions (every figure is computed from the records in deal order, so any number of
workers gives the same floats):

* **score per hand** of an agent: in each hand, the sum of the rulebook scores (R19) of
  the seats it holds (its side's net result); averaged over every hand (all seatings
  of all deals). A hand sums to zero, so B's mean is exactly minus A's. The 95%
  interval: each deal's mean over its seatings is one sample, and the interval is
  mean +- t * sd / sqrt(deals), t the 97.5% quantile of Student's t with deals - 1 degrees
  of freedom (sd with ddof=1): 12.7 at 2 deals, 2.09 at 20, 1.96 from a few thousand on,
  so a small evaluation's interval is not too narrow.
* **landlord share**: of the non-void hands, the fraction in which the agent held the
  landlord's seat (A's + B's = 1); ``landlord_bids``: the bid it became landlord at.
* **win rate as landlord**: of its landlord hands, the fraction won; **as farmer**: of
  the farmer seats it held (a hand where it holds both farmers counts twice), the
  fraction won. These include the mixed hands where it also holds a seat of the other
  side; the ``*_h2h`` rates count only the hands where it holds a whole side against
  the other agent (its landlord against two farmers of the other, or its two farmers
  against the other's landlord, once per hand). ``mean_score_as_*``: per landlord hand /
  per farmer seat.
* **bids**: of its bidding turns, the fraction of pass / 1 / 2 / 3.
* **double rate**: of its doubling turns (farmer seats), the fraction it doubled;
  **redouble rate**: of its redouble turns (landlord, someone doubled), the fraction.
* **bombs per hand**: bombs and rockets it played per seat held in a non-void hand.
* **void rate**: the fraction of hands all three seats passed (R4); one figure for the
  table, since both agents sit at every void hand.
"""
from __future__ import annotations

import math

import numpy as np

from .arena import COL

Z95 = 1.959963984540054


def t95(n: int) -> float:
    """The two-sided 95% factor of the mean of ``n`` i.i.d. samples: Student's t with n - 1 degrees of
    freedom (NaN below 2 samples)."""
    if n < 2:
        return math.nan
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1))


def _f(x: float) -> float | None:
    """A JSON-safe float: NaN (nothing to average) -> None."""
    x = float(x)
    return None if math.isnan(x) else x


def _rate(num, den) -> float | None:
    num, den = float(np.sum(num)), float(np.sum(den))
    return num / den if den else None


def mean_ci(samples: np.ndarray) -> dict:
    """Mean, standard error and the Student-t 95% interval of i.i.d. samples (None where undefined)."""
    n = samples.size
    mean = float(samples.mean()) if n else math.nan
    se = float(samples.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    h = t95(n) * se
    return {"mean": _f(mean), "se": _f(se), "ci95": [_f(mean - h), _f(mean + h)], "n": int(n)}


def per_deal_means(records: np.ndarray, masks: np.ndarray, n_seatings: int) -> np.ndarray:
    """(deals,) mean over each deal's seatings of the net score of the seats in ``masks`` (hands, 3)."""
    net = (records[:, COL["score0"]:COL["score2"] + 1] * masks).sum(axis=1)
    return net.reshape(-1, n_seatings).mean(axis=1)


def agent_figures(records: np.ndarray, masks: np.ndarray) -> dict:
    """Per-agent figures (see the module docstring); ``masks`` (hands, 3): the seats it holds."""
    r = records
    hands = np.arange(len(r))
    void = r[:, COL["void"]].astype(bool)
    played = ~void
    scores = r[:, COL["score0"]:COL["score2"] + 1]
    lord = np.where(played, r[:, COL["landlord"]], 0)
    is_lord_seat = (np.arange(3)[None, :] == lord[:, None]) & played[:, None]
    mine_lord = masks[hands, lord] & played
    lord_won = r[:, COL["winner"]] == r[:, COL["landlord"]]
    farmer_seats = masks & ~is_lord_seat & played[:, None]
    n_mine = masks.sum(axis=1)
    lord_alone = mine_lord & (n_mine == 1)  # its landlord against two farmers of the other agent
    farmers_both = played & ~mine_lord & (n_mine == 2)  # its two farmers against the other's landlord
    bids = r[:, COL["bid0"]:COL["bid2"] + 1]
    my_bids = bids[masks & (bids >= 0)]
    dbl = r[:, COL["dbl0"]:COL["dbl2"] + 1]
    my_dbl = dbl[farmer_seats & (dbl >= 0)]
    redbl = r[:, COL["redouble"]]
    my_redbl = redbl[mine_lord & (redbl >= 0)]
    bombs = r[:, COL["bombs0"]:COL["bombs2"] + 1]
    lord_bid = r[mine_lord, COL["bid"]]
    out = {
        "seat_hands": int(masks.sum()),
        "landlord_hands": int(mine_lord.sum()),
        "landlord_share": _rate(mine_lord, played),
        "landlord_bids": {str(b): _rate(lord_bid == b, lord_bid.size) for b in (1, 2, 3)},
        "mean_landlord_bid": _f(lord_bid.mean()) if lord_bid.size else None,
        "win_rate_landlord": _rate(mine_lord & lord_won, mine_lord),
        "win_rate_farmer": _rate(farmer_seats & ~lord_won[:, None], farmer_seats),
        "win_rate_landlord_h2h": _rate(lord_alone & lord_won, lord_alone),
        "win_rate_farmer_h2h": _rate(farmers_both & ~lord_won, farmers_both),
        "mean_score_as_landlord": _f(scores[hands, lord][mine_lord].mean()) if mine_lord.any() else None,
        "mean_score_as_farmer": _f(scores[farmer_seats].mean()) if farmer_seats.any() else None,
        "bids": {name: _rate(my_bids == b, my_bids.size) for b, name in enumerate(("pass", "1", "2", "3"))},
        "double_rate": _rate(my_dbl == 1, my_dbl.size),
        "redouble_rate": _rate(my_redbl == 1, my_redbl.size),
        "bombs_per_hand": _rate(bombs[masks & played[:, None]], (masks & played[:, None]).sum()),
    }
    return out


def summarize(records: np.ndarray, patterns: tuple[str, ...]) -> dict:
    """Every figure of an evaluation: ``records`` in (deal, seating) order, ``patterns`` the seatings
    as strings over the seats ("AAB": A in seats 0 and 1, B in seat 2)."""
    n_seat = len(patterns)
    if len(records) % n_seat:
        raise ValueError("records do not hold every seating of every deal")
    seat_a = np.array([[c == "A" for c in p] for p in patterns], dtype=bool)
    masks_a = seat_a[records[:, COL["seating"]]]
    masks_b = ~masks_a
    per_deal_a = per_deal_means(records, masks_a, n_seat)
    ci_a = mean_ci(per_deal_a)
    ci_b = mean_ci(-per_deal_a)
    scores = records[:, COL["score0"]:COL["score2"] + 1]
    void = records[:, COL["void"]].astype(bool)
    net_a = (scores * masks_a).sum(axis=1)
    by_seating = {}
    for k, p in enumerate(patterns):
        sel = records[:, COL["seating"]] == k
        by_seating[p] = {"mean_score_a": _f(net_a[sel].mean()), "void_rate": _f(void[sel].mean()),
                         "hands": int(sel.sum())}
    a = {"mean_score": ci_a["mean"], "score_se": ci_a["se"], "score_ci95": ci_a["ci95"],
         **agent_figures(records, masks_a)}
    b = {"mean_score": ci_b["mean"], "score_se": ci_b["se"], "score_ci95": ci_b["ci95"],
         **agent_figures(records, masks_b)}
    return {
        "deals": len(records) // n_seat,
        "hands": int(len(records)),
        "seatings": list(patterns),
        "A": a,
        "B": b,
        "void_rate": _f(void.mean()),
        "spring_rate": _rate(records[:, COL["spring"]], (~void).sum()),
        "anti_spring_rate": _rate(records[:, COL["anti_spring"]], (~void).sum()),
        "mean_plays_per_hand": _rate(records[~void, COL["plays"]], (~void).sum()),
        "seat_totals": scores.sum(axis=0).tolist(),
        "total_score": {"A": int(net_a.sum()), "B": int(-net_a.sum())},
        "max_abs_hand_sum": int(np.abs(scores.sum(axis=1)).max()) if len(scores) else 0,
        "by_seating": by_seating,
        "per_deal_score_a": [float(x) for x in per_deal_a],
    }


def fixed_landlord_figures(records: np.ndarray) -> dict:
    """DouZero / RLCard style figures: seating 0 = A landlord vs B farmers, seating 1 = swapped.

    WP: the fraction of deals the side wins; ADP: its mean score per deal (the landlord's
    score, or the two farmers' together, which is minus it). ``overall`` averages the
    landlord and farmer figures of a side, as the published tables do.
    """
    out = {}
    lord_score = records[np.arange(len(records)), COL["score0"] + records[:, COL["landlord"]]]
    lord_won = records[:, COL["winner"]] == records[:, COL["landlord"]]
    seating = records[:, COL["seating"]]
    for name, as_lord, as_farm in (("A", 0, 1), ("B", 1, 0)):
        lo, fa = seating == as_lord, seating == as_farm
        wp_l, wp_f = float(lord_won[lo].mean()), float((~lord_won[fa]).mean())
        adp_l, adp_f = float(lord_score[lo].mean()), float(-lord_score[fa].mean())
        out[name] = {
            "landlord": {"WP": wp_l, "ADP": adp_l},
            "farmer": {"WP": wp_f, "ADP": adp_f},
            "overall": {"WP": (wp_l + wp_f) / 2, "ADP": (adp_l + adp_f) / 2},
        }
    return out


def summarize_fixed(records: np.ndarray) -> dict:
    """Fixed-landlord figures: the seats of A differ per deal (the landlord seat is the deal's)."""
    lord = records[:, COL["landlord"]]
    lord_seat = np.arange(3)[None, :] == lord[:, None]
    a_lord = records[:, COL["seating"]] == 0
    masks_a = np.where(a_lord[:, None], lord_seat, ~lord_seat)
    scores = records[:, COL["score0"]:COL["score2"] + 1]
    net_a = (scores * masks_a).sum(axis=1)
    per_deal_a = net_a.reshape(-1, 2).mean(axis=1)
    ci_a, ci_b = mean_ci(per_deal_a), mean_ci(-per_deal_a)
    fl = fixed_landlord_figures(records)
    out = {"deals": len(records) // 2, "hands": int(len(records)), "seatings": ["A landlord", "B landlord"]}
    for name, ci, masks in (("A", ci_a, masks_a), ("B", ci_b, ~masks_a)):
        out[name] = {"mean_score": ci["mean"], "score_se": ci["se"], "score_ci95": ci["ci95"], **fl[name],
                     **agent_figures(records, masks)}
    out["void_rate"] = 0.0
    out["seat_totals"] = scores.sum(axis=0).tolist()
    out["total_score"] = {"A": int(net_a.sum()), "B": int(-net_a.sum())}
    out["max_abs_hand_sum"] = int(np.abs(scores.sum(axis=1)).max())
    out["mean_plays_per_hand"] = float(records[:, COL["plays"]].mean())
    out["spring_rate"] = float(records[:, COL["spring"]].mean())
    out["anti_spring_rate"] = float(records[:, COL["anti_spring"]].mean())
    out["per_deal_score_a"] = [float(x) for x in per_deal_a]
    return out


__all__ = ["summarize", "summarize_fixed", "fixed_landlord_figures", "agent_figures", "mean_ci", "per_deal_means", "Z95", "t95"]
