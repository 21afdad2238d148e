"""Train an agent from a config: the DMC (DouZero-style Deep Monte-Carlo) agent, or a MARL library's learner.

    ddz-train --config default [--set key=value ...] [--run-dir DIR]
    ddz-train --config my.yaml
    ddz-train --resume runs/<name>-<time>/ [--set total_frames=...]

(``python train.py`` in a clone, or ``python -m agents.cli.train``, are the same program.)
``--config`` takes a shipped config's name (listed by ``--help``) or a YAML file's path. A
run folder ``runs/<name>-<YYYYmmdd-HHMMSS>/`` gets ``config.yaml``, ``log.csv`` (frames,
fps, loss per network, mean score per position), ``checkpoint.pt`` (loadable with
``torch.load(path, weights_only=True)`` and ``agents.load(run folder or checkpoint)``) and
``learning_curve.png`` at the end.

A config's ``algo`` key chooses the learner (:mod:`agents.runs.algos`): ``dmc`` (the default) or a MARL
library's (``sb3``, ``tianshou``, ``torchrl``, ``rllib``: the move-scoring policy in that library, its own
keys, :mod:`agents.runs.library`), e.g. ``ddz-train --config torchrl``; ``--resume RUN`` continues
either kind.
"""
from __future__ import annotations

import argparse
import logging
import pickle
import sys
import zipfile
from pathlib import Path

from agents._entry import install_extra, needs_installed, plain

with needs_installed("python -m agents.cli.train", "agents.cli.train", active=__name__ == "__main__"):
    from agents.dmc.config import available_configs, config_help, config_path, load_config, resume_config
    from agents.runs.folder import CHECKPOINT, CheckpointWriteError, held_run, new_run_dir, resume_hint
    from agents.runs.stop import Terminated, exit_status
    from agents.runs.algos import LIBRARY_SCHEMA, algo_of


def learner_help(argv: list[str] | None) -> str:
    """``--config NAME --help`` of a library learner's config: that learner's options, their defaults and help
    (its module's ``DEFAULTS``; where its library is missing, the command that installs it)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    pre.add_argument("--set", dest="overrides", action="append", default=[])
    known, _ = pre.parse_known_args(argv if argv is not None else sys.argv[1:])
    if not known.config:
        return ""
    try:
        algo = algo_of(config_path(known.config) if known.config in available_configs() else known.config,
                       known.overrides)
    except ValueError:
        return ""
    if algo == "dmc":
        return ""
    from agents.integrations.options import options_help
    from agents.runs.library import learner_module

    try:
        module = learner_module(algo)
    except ImportError as e:
        return f"\n\n{algo}'s options: {e}"
    return "\n\n" + options_help(algo, module.DEFAULTS, getattr(module, "OWN", None))


def parser(prog: str = "ddz-train", more: str = "") -> argparse.ArgumentParser:
    epilog = (config_help() + "\n\nA library learner's config (algo: ppo, sb3, tianshou, torchrl or rllib) has these "
              "keys instead (--config NAME --help: its options too):\n" + LIBRARY_SCHEMA.help().split("\n", 1)[1] + more)
    ap = argparse.ArgumentParser(prog=prog, description=plain(__doc__), epilog=plain(epilog),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", metavar="NAME_OR_PATH",
                    help=f"a shipped config ({', '.join(available_configs())}) or a YAML file")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config key (repeatable; the keys are listed below)")
    ap.add_argument("--run-dir", help="run folder (default: runs/<name>-<YYYYmmdd-HHMMSS>)")
    ap.add_argument("--resume", metavar="RUN_OR_CHECKPOINT",
                    help="continue a run from its folder (its checkpoint.pt) or a checkpoint file")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(argv: list[str] | None = None, prog: str = "ddz-train") -> int:
    asks_help = any(a in ("-h", "--help") for a in (argv if argv is not None else sys.argv[1:]))
    ap = parser(prog, learner_help(argv) if asks_help else "")
    args = ap.parse_args(argv)
    name = ap.prog
    if not args.config and not args.resume:
        print(f"{name}: error: give --config NAME_OR_PATH or --resume RUN; the shipped configs are "
              f"{', '.join(available_configs())} (for example: {name} --config smoke); --help lists every key",
              file=sys.stderr)
        return 2
    if args.resume and args.config:
        print(f"{name}: error: --resume continues with the run's own config: use --set to change keys",
              file=sys.stderr)
        return 2
    try:  # the learner: the config's algo key (a run folder's config.yaml on --resume)
        if args.resume:
            saved = Path(args.resume) / "config.yaml" if Path(args.resume).is_dir() else None
            algo = algo_of(saved) if saved is not None and saved.is_file() else "dmc"
        else:
            algo = algo_of(config_path(args.config), args.overrides)
    except (ValueError, FileNotFoundError) as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # PyYAML: the 'train' extra
        print(f"{name}: error: training needs the 'train' extra: {install_extra('train')} ({e})", file=sys.stderr)
        return 2
    if algo != "dmc":
        return train_library(args, name)
    try:  # torch, PyYAML, tqdm, matplotlib: the 'train' extra (not needed for --help and the checks above)
        from agents.dmc.learner.sources import ActorsFailed
        from agents.dmc.learner.trainer import load_checkpoint, train
    except ImportError as e:
        print(f"{name}: error: training needs the 'train' extra: {install_extra('train')} (a CPU-only torch "
              f"first: pip install torch --index-url https://download.pytorch.org/whl/cpu) ({e})", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if args.resume:
            ck = load_checkpoint(args.resume)
            cfg = resume_config(ck["config"], args.overrides, has_tables=ck.get("collector") is not None,
                                where=f"the config stored in {args.resume}")
            p = Path(args.resume)
            run_dir = Path(args.run_dir) if args.run_dir else (p if p.is_dir() else p.parent)
        else:
            ck = None
            cfg = load_config(args.config, args.overrides)
            run_dir = Path(args.run_dir) if args.run_dir else new_run_dir(cfg.name)
            if held_run(run_dir):  # a new run never mixes with an old one's checkpoint and logs
                raise ValueError(held_run(run_dir))
        cfg.check_agents()  # a mistyped opponent is said now, before the run folder exists
    except (ValueError, FileNotFoundError) as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    from ddz_env.files import folder_problem, write_failure

    problem = folder_problem(run_dir)  # a read-only disk is said now, not as a traceback after the start-up
    if problem is not None:
        print(f"{name}: error: run folder {run_dir}: {problem}; give a writable --run-dir", file=sys.stderr)
        return 2
    logging.getLogger("dmc").info("run folder %s", run_dir)
    try:
        train(cfg, run_dir, resume=ck, progress=not args.no_progress)
    except ValueError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except CheckpointWriteError as e:  # says itself what is intact and how to resume
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1
    except ActorsFailed as e:  # the actors, not the run, failed: what was saved before them is intact
        print(f"{name}: error: {e}; the run stopped, {resume_hint(run_dir)}", file=sys.stderr)
        return 1
    except OSError as e:  # log.csv, eval.csv, config.yaml or the learning curve (each written whole or appended)
        where = f" ({e.filename})" if e.filename else ""
        print(f"{name}: error: writing the run folder {run_dir} failed{where}: {write_failure(e)}; "
              f"{resume_hint(run_dir)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # Ctrl-C: 130; SIGTERM (agents.runs.stop.Terminated): 143
        print(f"\n{stopped_line(name, run_dir, e)}", file=sys.stderr)
        return exit_status(e)
    return 0


def stopped_line(name: str, run_dir: Path, stop: KeyboardInterrupt) -> str:
    """What a run that Ctrl-C or SIGTERM stopped says: the checkpoint saved on stopping (``stop.saved``: its
    frames) or the last one left, and the command that continues it."""
    what = "stopped by SIGTERM" if isinstance(stop, Terminated) else "interrupted"
    saved = getattr(stop, "saved", None)
    if saved is None:
        return f"{name}: {what}; {resume_hint(run_dir)}"
    command = f"python {name}" if name.endswith(".py") else name
    return (f"{name}: {what}; checkpoint saved at {saved:,} frames ({run_dir / CHECKPOINT}): continue with: "
            f"{command} --resume {run_dir}")


def train_library(args: argparse.Namespace, name: str) -> int:
    """``train.py`` for a library learner's config (``algo`` other than dmc): 0, 1 (the run failed) or 2."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        from agents.runs.library import check_agents, check_options, learner_module, load_library_config, \
            run_library

        if args.resume:
            run_dir = Path(args.run_dir or args.resume)
            cfg = load_library_config(args.resume, args.overrides)
        else:
            cfg = LIBRARY_SCHEMA.load(args.config, args.overrides)
            run_dir = Path(args.run_dir) if args.run_dir else new_run_dir(cfg.name)
            if held_run(run_dir):
                raise ValueError(held_run(run_dir))
        check_options(cfg, learner_module(cfg.algo))  # said now, before the run folder exists
        check_agents(cfg)
    except (ValueError, FileNotFoundError, ImportError) as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    from ddz_env.files import folder_problem

    problem = folder_problem(run_dir)
    if problem is not None:
        print(f"{name}: error: run folder {run_dir}: {problem}; give a writable --run-dir", file=sys.stderr)
        return 2
    logging.getLogger("ddz.train").info("run folder %s (%s)", run_dir, cfg.algo)
    from agents.runs.session import LearnerStopped

    try:
        run_library(cfg, run_dir, resume=bool(args.resume), progress=not args.no_progress)
    except LearnerStopped as e:  # (before RuntimeError: the learner's state is whole, its checkpoint just written)
        print(f"{name}: error: {e}; the run stopped with its work saved: continue with: {name} --resume {run_dir}",
              file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except CheckpointWriteError as e:  # the learner's state (a full disk): says what is whole
        print(f"{name}: error: {e}; continue with: {name} --resume {run_dir} (once there is room)", file=sys.stderr)
        return 1
    except OSError as e:  # a full disk, a folder gone: the files written so far are whole (atomic writes)
        from ddz_env.files import write_failure

        where = f" ({e.filename})" if e.filename else ""
        print(f"{name}: error: writing the run folder {run_dir} failed{where}: {write_failure(e)}; continue "
              f"with: {name} --resume {run_dir}", file=sys.stderr)
        return 1
    except (RuntimeError, EOFError, KeyError, pickle.UnpicklingError, zipfile.BadZipFile) as e:
        if not args.resume:
            raise
        # a learner state that does not load (truncated, from another version): one line, not a traceback
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"{name}: error: cannot resume {run_dir}: its learner state does not load ({type(e).__name__}: "
              f"{first[:200]}); start a new run, or restore the run folder's files", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # Ctrl-C: 130; SIGTERM (agents.runs.stop.Terminated): 143
        what = "stopped by SIGTERM" if isinstance(e, Terminated) else "interrupted"
        print(f"\n{name}: {what}, the learner's work so far saved; continue with: {name} --resume {run_dir}",
              file=sys.stderr)
        return exit_status(e)
    return 0


if __name__ == "__main__":
    with needs_installed("python -m agents.cli.train", "agents.cli.train"):
        sys.exit(main(prog="python -m agents.cli.train"))
