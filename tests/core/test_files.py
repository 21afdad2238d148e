"""ddz_env.files: writes whole or not at all, output folders checked before the work (issue 22)."""
import errno
import os
import tempfile

import pytest

from ddz_env import files


def test_folder_problem_names_what_is_wrong_and_changes_nothing(tmp_path):
    assert files.folder_problem(tmp_path) is None
    assert files.folder_problem(tmp_path / "a" / "b") is None  # would be created: judged by tmp_path
    assert not (tmp_path / "a").exists()
    (tmp_path / "f").write_text("x")
    assert files.folder_problem(tmp_path / "f") == "it is a file, not a folder"
    assert "is a file, so no folder can be made" in files.folder_problem(tmp_path / "f" / "sub")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # the probe left nothing


def test_folder_problem_tries_a_real_write(tmp_path, monkeypatch):
    """Root passes every permission check, a read-only mount fails only on writing: the check writes."""
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert files.folder_problem(tmp_path) == "it is not writable (Read-only file system)"
    assert "where it would be created, is not writable" in files.folder_problem(tmp_path / "new")


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_replacing_keeps_the_old_file_on_any_failure(tmp_path, error):
    p = tmp_path / "out.txt"
    p.write_text("old")
    with pytest.raises(type(error)):
        with files.replacing(p) as tmp:
            with open(tmp, "w") as f:
                f.write("half")
            raise error
    assert p.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]
    files.write_text(p, "new")
    assert p.read_text() == "new" and os.listdir(tmp_path) == ["out.txt"]


def test_write_failure_is_the_os_reason():
    assert files.write_failure(OSError(errno.ENOSPC, "No space left on device", "/x/.tmp")) == "No space left on device"
    torch_text = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")
    assert "could not be written in full" in files.write_failure(torch_text)


def test_a_replaced_file_gets_the_mode_open_would_give(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_text(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644


def test_write_binary_fails_with_the_disk_error_a_writer_swallowed(tmp_path, monkeypatch):
    """torch.save swallows its writes' OSError and fails later with a RuntimeError of its own
    ("unexpected pos"): the disk's error is what comes out, and nothing is left behind."""
    import builtins

    real_open = builtins.open

    def full_open(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        if "w" in mode:
            def write(data):
                raise OSError(errno.ENOSPC, "No space left on device")
            f.write = write
        return f

    def swallowing_writer(f):
        try:
            f.write(b"x" * 100)
        except OSError:
            pass
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")

    p = tmp_path / "c.pt"
    p.write_bytes(b"old")
    monkeypatch.setattr(files, "open", full_open, raising=False)
    with pytest.raises(OSError, match="No space left on device"):
        files.write_binary(p, swallowing_writer)
    monkeypatch.undo()
    assert p.read_bytes() == b"old" and os.listdir(tmp_path) == ["c.pt"]
    files.write_binary(p, lambda f: f.write(b"new"))
    assert p.read_bytes() == b"new"
