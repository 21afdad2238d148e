"""Train the DMC (DouZero-style Deep Monte-Carlo) agent.

    python train.py --config configs/default.yaml [--set key=value ...] [--run-dir DIR]
    python train.py --resume runs/<name>-<time>/ [--set total_frames=...]

A run folder ``runs/<name>-<YYYYmmdd-HHMMSS>/`` gets ``config.yaml``, ``log.csv`` (frames, fps,
loss per network, mean score per position), ``checkpoint.pt`` (loadable with
``torch.load(path, weights_only=True)`` and ``agents.dmc.DMCAgent.from_checkpoint``) and
``learning_curve.png`` at the end.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from agents.dmc.config import load_config, resume_config
from agents.dmc.trainer import load_checkpoint, train


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="YAML config file (configs/*.yaml)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config key (repeatable)")
    ap.add_argument("--run-dir", help="run folder (default: runs/<name>-<YYYYmmdd-HHMMSS>)")
    ap.add_argument("--resume", metavar="RUN_OR_CHECKPOINT",
                    help="continue a run from its folder (its checkpoint.pt) or a checkpoint file")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if args.resume:
            if args.config:
                ap.error("--resume continues with the run's own config: use --set to change keys")
            ck = load_checkpoint(args.resume)
            cfg = resume_config(ck["config"], args.overrides, has_tables=ck.get("collector") is not None)
            p = Path(args.resume)
            run_dir = Path(args.run_dir) if args.run_dir else (p if p.is_dir() else p.parent)
        else:
            ck = None
            cfg = load_config(args.config, args.overrides)
            run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / f"{cfg.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    logging.getLogger("dmc").info("run folder %s", run_dir)
    try:
        train(cfg, run_dir, resume=ck, progress=not args.no_progress)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
