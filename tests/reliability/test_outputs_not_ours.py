"""Issue 62, item 4 (N35): outputs that are not ours are never replaced. Every output went through a temporary
file and ``os.replace``, so ``evaluate.py --out /dev/null`` run as root left the machine a regular JSON file in
place of its null device, ``--out /dev/stdout`` replaced the link, a FIFO someone read was swapped for a file
and a link to a results file became a file of its own. Now (``ddz_env.files``): a stream (a character device,
a FIFO) is written in place, a link is followed and kept, anything else that is not a regular file is refused
in one line; the same for every writer of a path a person gives.

The machine's ``/dev/null`` and ``/dev/stdout`` are written only with ``os.replace`` and ``os.rename`` made to
fail for them, so code that would still rename over them fails the test instead of damaging the machine."""
from __future__ import annotations

import io
import json
import os
import select
import socket
import stat
import subprocess
import sys
import threading

import pytest

from common import ROOT, needs, needs_torch
from ddz_env import files

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/null"),
                                reason="FIFOs and /dev/null are POSIX")

#: prepended to a child's code: ``os.replace`` / ``os.rename`` onto anything under /dev fail (and say so)
GUARD = """
import os
def _guarded(real):
    def call(src, dst, *args, **kwargs):
        if os.path.abspath(os.fspath(dst)).startswith("/dev/"):
            raise OSError("test guard: a rename over " + os.fspath(dst) + " was attempted")
        return real(src, dst, *args, **kwargs)
    return call
os.replace, os.rename = _guarded(os.replace), _guarded(os.rename)
"""


class FifoReader:
    """The reading end of a FIFO, held from the start (opened without waiting, so a writer never blocks on
    it and a test never hangs when nothing comes), and what a writer sent until it closed its end."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.closed_by_writer = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:  # (select reports a FIFO's end only after a writer came and went)
                    self.closed_by_writer = True
                    return
                self.data += chunk
            elif self.stop.is_set():
                return

    def result(self) -> bytes:
        """What was read, once the writer is done (call after the writing process ended)."""
        self.stop.set()
        self.thread.join(30)
        os.close(self.fd)
        return bytes(self.data)


def is_fifo(path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


def linked(tmp_path, name: str, old: bytes = b"old") -> tuple:
    """``tmp_path/name``: a link to ``tmp_path/real/name``, a regular file holding ``old``; (link, target)."""
    (tmp_path / "real").mkdir(exist_ok=True)
    target = tmp_path / "real" / name
    target.write_bytes(old)
    link = tmp_path / name
    os.symlink(os.path.join("real", name), link)
    return link, target


def still_a_link_to(link, target) -> bool:
    return os.path.islink(link) and os.readlink(link) == os.path.join("real", target.name)


def run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------------------------- ddz_env.files
def test_a_link_to_a_regular_file_stays_a_link_and_its_target_gets_the_content(tmp_path):
    link, target = linked(tmp_path, "r.json")
    files.write_text(link, "new")
    assert still_a_link_to(link, target) and target.read_text() == "new"
    files.write_binary(link, lambda f: f.write(b"binary"))
    assert still_a_link_to(link, target) and target.read_bytes() == b"binary"
    assert sorted(os.listdir(tmp_path)) == ["r.json", "real"] and os.listdir(tmp_path / "real") == ["r.json"]


def test_a_dangling_link_stays_a_link_and_the_file_it_names_is_created(tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "r.json"
    os.symlink(os.path.join("real", "r.json"), link)
    files.write_text(link, "first")
    assert os.path.islink(link) and (tmp_path / "real" / "r.json").read_text() == "first"
    assert os.listdir(tmp_path / "real") == ["r.json"]


def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    files.write_text(fifo, '{"a": 1}')
    assert reader.result() == b'{"a": 1}' and reader.closed_by_writer
    assert is_fifo(fifo) and os.listdir(tmp_path) == ["out.json"]
    reader = FifoReader(fifo)
    files.write_binary(fifo, lambda f: f.write(b"\x00" * 200_000))  # (more than a pipe holds: read as it comes)
    assert reader.result() == b"\x00" * 200_000 and is_fifo(fifo)


def test_a_link_to_a_fifo_is_written_in_place_and_both_stay(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    os.symlink("pipe", tmp_path / "out.json")
    reader = FifoReader(fifo)
    files.write_text(tmp_path / "out.json", "through the link")
    assert reader.result() == b"through the link"
    assert os.path.islink(tmp_path / "out.json") and is_fifo(fifo)


def test_dev_null_is_written_in_place_and_stays_a_character_device(monkeypatch):
    renamed = []

    def refuse(src, dst, *args, **kwargs):  # (so that no code under test can rename over the machine's /dev/null)
        renamed.append(os.fspath(dst))
        raise OSError("test guard: no rename in this test")

    monkeypatch.setattr(os, "replace", refuse)
    monkeypatch.setattr(os, "rename", refuse)
    assert files.written_in_place("/dev/null") and files.output_problem("/dev/null") is None
    files.write_text("/dev/null", "{}")
    files.write_binary("/dev/null", lambda f: f.write(b"x" * 1000))
    with files.replacing("/dev/null") as where:
        assert where == "/dev/null"
    assert renamed == [] and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [n for n in os.listdir("/dev") if n.startswith(".null.")]  # no temporary file was left in /dev


def test_dev_stdout_is_written_in_place_and_stays_a_link():
    """/dev/stdout is a link to the process's standard output (here a pipe): the text comes out on it."""
    before = os.lstat("/dev/stdout")
    code = GUARD + "from ddz_env.files import write_text\nwrite_text('/dev/stdout', 'on stdout')\n"
    p = run("-c", code, timeout=60)
    assert p.returncode == 0 and p.stdout == "on stdout", (p.stdout, p.stderr[-1000:])
    after = os.lstat("/dev/stdout")
    assert stat.S_ISLNK(after.st_mode) and (after.st_ino, after.st_dev) == (before.st_ino, before.st_dev)


@pytest.mark.parametrize("kind", ["a directory", "a socket"])
def test_what_is_neither_a_file_nor_a_stream_is_refused_in_one_line_naming_it(tmp_path, kind):
    if kind == "a directory":
        path = tmp_path / "out.json"
        path.mkdir()
    else:
        path = tmp_path / "s"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(os.fspath(path))
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(files.OutputRefused) as e:
        files.write_text(path, "x")
    assert str(e.value) == (f"{os.fspath(path)!r} is {kind}, not a regular file: refused (an output is written to a "
                            f"file, a character device or a FIFO, never over anything else)")
    assert files.write_failure(e.value) == str(e.value)  # (what the command lines print)
    os.symlink(os.path.basename(path), tmp_path / "link")
    with pytest.raises(files.OutputRefused, match=f"link' leads to .*, {kind}, not a regular file: refused"):
        files.write_text(tmp_path / "link", "x")
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["link"]) and os.path.islink(tmp_path / "link")
    assert os.path.isdir(path) if kind == "a directory" else stat.S_ISSOCK(os.lstat(path).st_mode)


# ---------------------------------------------------------------------------------------------- the command lines
def test_evaluate_out_through_a_link_writes_the_target_and_keeps_the_link(tmp_path):
    link, target = linked(tmp_path, "e.json")
    p = run("evaluate.py", "--a", "rule", "--b", "random", "--deals", "2", "--out", str(link))
    assert p.returncode == 0, p.stderr[-2000:]
    assert still_a_link_to(link, target) and json.loads(target.read_text())["hands"] == 12


def test_evaluate_out_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "e.json"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = run("evaluate.py", "--a", "rule", "--b", "random", "--deals", "2", "--out", str(fifo))
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(reader.result())["hands"] == 12 and is_fifo(fifo)


def test_evaluate_out_dev_null_is_written_in_place_and_dev_null_stays_a_device(tmp_path):
    code = GUARD + ("import runpy, sys\nsys.argv = ['evaluate.py', '--a', 'rule', '--b', 'random', '--deals', '2', "
                    "'--out', '/dev/null']\nrunpy.run_path('evaluate.py', run_name='__main__')\n")
    p = run("-c", code)
    assert p.returncode == 0 and "wrote /dev/null" in p.stdout, p.stderr[-2000:]
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_evaluate_out_a_socket_is_refused_before_the_evaluation_in_one_line(tmp_path):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.fspath(tmp_path / "s"))
    p = run("evaluate.py", "--a", "rule", "--b", "random", "--deals", "2", "--out", str(tmp_path / "s"))
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert p.stderr.strip().splitlines()[-1] == (f"evaluate.py: error: --out {str(tmp_path / 's')!r}: "
                                                 f"{str(tmp_path / 's')!r} is a socket, not a regular file: refused "
                                                 f"(an output is written to a file, a character device or a FIFO, "
                                                 f"never over anything else)")
    assert stat.S_ISSOCK(os.lstat(tmp_path / "s").st_mode)


def test_league_out_through_a_link_writes_the_target_and_keeps_the_link(tmp_path):
    link, target = linked(tmp_path, "league.json")
    p = run("evaluate.py", "--league", "random", "rule", "--deals", "2", "--no-progress", "--out", str(link))
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads(target.read_text())
    assert still_a_link_to(link, target) and data["agents"] == ["random", "rule"]
    if data["png"] is not None:  # (matplotlib installed: the heatmap beside the name given)
        assert data["png"] == str(tmp_path / "league.png")
        assert (tmp_path / "league.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_league_out_a_fifo_gets_the_json_once_and_no_heatmap_beside_it(tmp_path):
    fifo = tmp_path / "league.json"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = run("evaluate.py", "--league", "random", "rule", "--deals", "2", "--no-progress", "--out", str(fifo))
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads(reader.result())  # (one JSON document: a second would not parse)
    assert data["agents"] == ["random", "rule"] and data["png"] is None and is_fifo(fifo)
    assert os.listdir(tmp_path) == ["league.json"] and "no PNG heatmap beside a stream" in p.stdout


@needs_torch
def test_dmc_export_through_a_link_writes_the_target_and_keeps_the_link(tmp_path):
    import torch

    link, target = linked(tmp_path, "mine.pt")
    p = run("-m", "agents.dmc.export", "agents/pretrained/dmc.pt", str(link))
    assert p.returncode == 0, p.stderr[-2000:]
    assert still_a_link_to(link, target)
    assert torch.load(target, weights_only=True)["frames"] == 72_000_512
    assert json.loads((tmp_path / "mine.json").read_text())["checkpoint"] == "mine.pt"  # (beside the name given)


@needs_torch
def test_dmc_export_to_a_fifo_writes_in_place_and_no_provenance_beside_it(tmp_path):
    import torch

    fifo = tmp_path / "mine.pt"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = run("-m", "agents.dmc.export", "agents/pretrained/dmc.pt", str(fifo))
    assert p.returncode == 0, p.stderr[-2000:]
    ck = torch.load(io.BytesIO(reader.result()), weights_only=True)
    assert ck["frames"] == 72_000_512 and "model" in ck and is_fifo(fifo)
    assert os.listdir(tmp_path) == ["mine.pt"] and "no provenance file beside a stream" in p.stdout


needs_onnx = needs("onnx", "onnx")


@needs_torch
@needs_onnx
def test_onnx_export_through_a_link_writes_the_target_and_keeps_the_link(tmp_path):
    import onnx

    link, target = linked(tmp_path, "a.onnx")
    p = run("-m", "agents.export", "pretrained", str(link), "--check", "0")
    assert p.returncode == 0, p.stderr[-2000:]
    assert still_a_link_to(link, target)
    meta = {m.key: m.value for m in onnx.load(target).metadata_props}
    assert meta["ddz_env.kind"] == "dmc"


@needs_torch
@needs_onnx
def test_onnx_export_to_a_fifo_writes_in_place(tmp_path):
    import onnx

    fifo = tmp_path / "a.onnx"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = run("-m", "agents.export", "pretrained", str(fifo), "--check", "0")
    assert p.returncode == 0, p.stderr[-2000:]
    meta = {m.key: m.value for m in onnx.load_from_string(reader.result()).metadata_props}
    assert meta["ddz_env.kind"] == "dmc" and is_fifo(fifo) and os.listdir(tmp_path) == ["a.onnx"]


def _two_runs(tmp_path) -> list[str]:
    """Two run folders with a few log.csv rows (what ddz-compare draws)."""
    runs = []
    for k in range(2):
        run_dir = tmp_path / f"run{k}"
        run_dir.mkdir()
        rows = ["frames,fps,void_rate,bid_3,score_vs_opponents"]
        rows += [f"{f},{1000 + k},{0.1 * k},0.2,{0.01 * f / 1024}" for f in (1024, 2048, 4096)]
        (run_dir / "log.csv").write_text("\n".join(rows) + "\n")
        runs.append(str(run_dir))
    return runs


@needs("matplotlib", "train")
def test_compare_out_through_a_link_writes_the_target_and_keeps_the_link(tmp_path):
    runs = _two_runs(tmp_path)
    link, target = linked(tmp_path, "cmp.png")
    p = run("-m", "agents.cli.compare", *runs, "--out", str(link))
    assert p.returncode == 0, p.stderr[-2000:]
    assert still_a_link_to(link, target) and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["cmp.png", "real", "run0", "run1"]


@needs("matplotlib", "train")
def test_compare_out_a_fifo_gets_the_png_in_place(tmp_path):
    runs = _two_runs(tmp_path)
    fifo = tmp_path / "cmp.png"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = run("-m", "agents.cli.compare", *runs, "--out", str(fifo))
    assert p.returncode == 0, p.stderr[-2000:]
    png = reader.result()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000 and is_fifo(fifo)
