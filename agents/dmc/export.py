"""Export a training checkpoint as a playing checkpoint: weights only, plus a provenance file.

    python -m agents.dmc.export RUN_OR_CHECKPOINT OUT.pt [--eval results.json ...] [--note TEXT]

Keeps what playing needs (``agent``, ``format_version``, ``config``, ``model_kwargs``,
``net_names``, ``model``, ``frames``, ``updates``, ``elapsed``) and drops the optimizer,
the tables and the generators, so the file is about a third of a training checkpoint.
Writes ``OUT.json`` beside it: the run's config, frames, training wall time, the machine,
the git commit of the code, and the evaluation results given with ``--eval`` (JSON files
written by ``evaluate.py --out``, each with the command that reproduces it). ``OUT.pt`` that is a stream
(``/dev/null``, a FIFO) is written in place and gets no ``OUT.json``: nothing is "beside" a stream, and
``/dev/null.json`` is no place for one; a link ``OUT.pt`` is followed, never replaced (:mod:`ddz_env.files`).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from .._entry import needs_installed

with needs_installed("python -m agents.dmc.export", "agents.dmc.export", active=__name__ == "__main__"):
    import torch

    from ddz_env.files import write_binary, write_text, written_in_place

    from .checkpoint import load_checkpoint

KEEP = ("agent", "format_version", "config", "model_kwargs", "net_names", "model", "frames", "updates", "elapsed")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = f"{names[0]} x {len(names)}" if names else cpu
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {cpu}, torch {torch.__version__}"


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


#: an --eval file's size limit (an evaluate.py --out JSON is a few KB: per-deal scores of 2,000 deals)
MAX_EVAL_BYTES = 16 << 20


def read_evaluations(paths: list[str]) -> list[dict]:
    """What the provenance keeps of each ``evaluate.py --out`` JSON of ``paths``; ``ValueError`` naming the first
    that is missing, not JSON or not such a result (checked before anything is written)."""
    from ddz_env.files import input_file

    results = []
    for path in paths:
        try:
            with open(input_file(path, "--eval file", MAX_EVAL_BYTES), encoding="utf-8") as f:
                res = json.load(f)
        except FileNotFoundError:
            raise ValueError(f"--eval file {path!r} not found (write it first: evaluate.py --a RUN --b rule "
                             f"--out {path}); nothing was written") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"--eval file {path!r} is not an evaluate.py --out JSON ({e}); nothing was written") from None
        if not isinstance(res, dict) or not isinstance(res.get("config"), dict):
            raise ValueError(f"--eval file {path!r} is not an evaluate.py --out JSON (an object with its \"config\"); "
                             f"nothing was written")
        results.append({"file": os.path.basename(path), "config": res.get("config"),
                        "command": res.get("command"), "A": res.get("A"), "deals": res.get("deals"),
                        "hands": res.get("hands")})
    return results


def export(src: str | os.PathLike, dst: str | os.PathLike, evals: list[str] = (), note: str = "") -> dict:
    """Write the playing checkpoint ``dst`` and its provenance ``dst`` with ``.json`` (none beside a stream); returns
    the provenance. Every input (the checkpoint, each ``evals`` file) is read and checked before anything is written."""
    ck = load_checkpoint(src)
    results = read_evaluations(list(evals))
    out = {k: ck[k] for k in KEEP if k in ck}
    dst = Path(dst)
    if dst.is_dir():
        raise ValueError(f"{os.fspath(dst)!r} is a folder: give the .pt file to write")
    dst.parent.mkdir(parents=True, exist_ok=True)
    prov = {"checkpoint": dst.name, "source": os.fspath(src), "frames": int(ck.get("frames", 0)),
            "updates": int(ck.get("updates", 0)), "train_wall_seconds": round(float(ck.get("elapsed", 0.0)), 1),
            "machine": machine(), "git_commit": git_commit(), "config": ck["config"], "evaluations": results,
            "note": note}
    stream = written_in_place(dst)
    write_binary(dst, lambda f: torch.save(out, f))  # whole or not at all (in place into a stream)
    if not stream:
        write_text(dst.with_suffix(".json"), json.dumps(prov, indent=1) + "\n")
    return prov


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.dmc.export", description=__doc__.splitlines()[0])
    p.add_argument("src", help="a run folder or a training checkpoint")
    p.add_argument("dst", help="the playing checkpoint to write (its provenance goes to the same name .json)")
    p.add_argument("--eval", action="append", default=[], help="an evaluate.py --out JSON to record (repeatable)")
    p.add_argument("--note", default="", help="free text for the provenance file")
    a = p.parse_args(argv)
    try:
        prov = export(a.src, a.dst, a.eval, a.note)
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    if written_in_place(a.dst):
        print(f"wrote {a.dst} ({prov['frames']:,} frames; no provenance file beside a stream)")
        return 0
    size = os.path.getsize(a.dst) / 2**20
    print(f"wrote {a.dst} ({size:.1f} MiB, {prov['frames']:,} frames) and {Path(a.dst).with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    with needs_installed("python -m agents.dmc.export", "agents.dmc.export"):
        sys.exit(main())
