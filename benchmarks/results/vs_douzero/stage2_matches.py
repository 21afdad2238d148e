"""The two ``ours_douzero`` rows of ``bench_vs_douzero.py`` (equal time, equal frames) against DouZero's
weights, through the benchmark's own ``head_to_head`` on the stages it saved (``stages.json`` in its
``--out-dir``): how this session's rows were played, before the third trainer's hour had run.

    python benchmarks/results/vs_douzero/stage2_matches.py /work/bvd
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository

from bench_vs_douzero import head_to_head  # noqa: E402


def main(out_dir: str) -> None:
    out = Path(out_dir)
    run = json.loads((out / "stages.json").read_text())["stages"]["ours_douzero"]
    rows = []
    for label, frames, ck in (("douzero, equal time", run["frames"], run["time_checkpoint"]),
                              ("douzero, equal frames", run["equal_frames"], run["equal_checkpoint"])):
        h = head_to_head(ck, f"douzero:{out / 'douzero'}", 1000, 0, 2)
        rows.append({"label": label, "frames": frames, "checkpoint": ck, "match": h})
        print(label, frames, f"WP {h['WP']:.3f} {h['WP_ci95']}  ADP {h['ADP']:+.3f} {h['ADP_ci95']}", flush=True)
    (out / "stage2_matches.json").write_text(json.dumps({"ours_douzero": run, "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
