"""Output files written whole or not at all, and output folders checked before the work that fills them.

:func:`replacing` gives a temporary path beside the target; when the block ends cleanly the
temporary file replaces the target (``os.replace``: atomic on POSIX and Windows), on any error
(a full disk, a read-only folder, Ctrl-C) it is removed and the target is left as it was: a
reader sees the old file or the new one, never a half-written one. :func:`folder_problem`
says, before anything is written, why files could not be created in a folder.

Only what is ours is replaced: a new file or a regular file. An output path that is anything else
is never renamed over (``--out /dev/null`` run as root would otherwise leave the machine a
regular file in place of its null device, ``--out /dev/stdout`` would replace the link):

* a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a terminal, a named pipe someone
  reads) is a stream: it is opened and written in place, as a shell's ``>`` would, and there is
  nothing to replace; a FIFO nobody reads blocks the writer, as it would block ``>``;
* a block device (a disk), a directory or a socket is refused, before anything is written, with
  an :class:`OutputRefused` (an ``OSError``) whose one line names the path and what it is;
* a symbolic link is followed, never replaced: to a stream it is written in place as above; to a
  regular file, or to nothing yet (a dangling link), the file it leads to is replaced atomically
  beside itself, and the link stays as it was, now leading to the new file.

One rule for every writer (:func:`replacing`, :func:`write_text`, :func:`write_binary`), so the
command lines, the league, the exports and the drawings agree; :func:`output_problem` says the
same before the work, :func:`written_in_place` tells a writer that a path is a stream (where a
second file "beside" it, a ``.json`` or a ``.png``, has no place).
Only the standard library: the rules core depends on nothing else.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from typing import Any, BinaryIO, Callable, Iterator


#: the most bytes one file an agent spec names may have (a checkpoint, a DouZero network; the shipped
#: agent is 18 MB, a training checkpoint with its optimizer about 60 MB); ``DDZ_MAX_LOAD_BYTES`` raises it
MAX_LOAD_BYTES = 256 << 20


def max_load_bytes() -> int:
    """:data:`MAX_LOAD_BYTES`, or the environment's ``DDZ_MAX_LOAD_BYTES`` (a positive integer) when set."""
    text = os.environ.get("DDZ_MAX_LOAD_BYTES", "")
    return int(text) if text.isdigit() and int(text) > 0 else MAX_LOAD_BYTES


def input_file(path: str | os.PathLike, what: str = "file", max_bytes: int | None = None) -> str:
    """``path`` as a string if it is a regular file of at most ``max_bytes`` (default :func:`max_load_bytes`),
    checked with ``os.stat`` before anything opens it: a FIFO, a device or a socket would block or stream
    forever, a huge file would be read whole. ``FileNotFoundError`` if nothing is there, else ``ValueError``
    naming ``what``, the path and the figure."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {p!r} not found") from None
    except OSError as e:
        raise ValueError(f"{what} {p!r} cannot be read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise ValueError(f"{what} {p!r} is {kind}, not a regular file: refused")
    if max_bytes is not None:  # (a limit of the caller's own: DDZ_MAX_LOAD_BYTES does not move it)
        if st.st_size > max_bytes:
            raise ValueError(f"{what} {p!r} is {st.st_size:,} bytes, more than the {max_bytes:,} it may be")
        return p
    limit = max_load_bytes()
    if st.st_size > limit:
        raise ValueError(f"{what} {p!r} is {st.st_size:,} bytes, more than the {limit:,} an agent file may be "
                         f"(set DDZ_MAX_LOAD_BYTES to allow more)")
    return p


class OutputRefused(OSError):
    """An output path that is not ours to write: a directory, a block device, a socket (its message is one
    line naming the path and what it is)."""


def _kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words."""
    return ("a regular file" if stat.S_ISREG(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def _destination(path: str | os.PathLike) -> tuple[str, bool]:
    """``(the path to write, in place?)`` for the output ``path`` (the rule of the module's docstring).

    ``(path, False)``: nothing is there, or a regular file: replaced. ``(its target, False)``: a link to a
    regular file or to nothing yet: the target is replaced, the link kept. ``(path, True)``: a character
    device or a FIFO, itself or through links: written in place (opened by the name given, which for
    ``/dev/stdout`` reaches a pipe that no resolved name would). :class:`OutputRefused` otherwise; an
    ``OSError`` if the path cannot be examined (a loop of links, a folder that may not be searched)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)  # (through every link)
    except FileNotFoundError:
        return (os.path.realpath(p) if os.path.islink(p) else p), False
    if stat.S_ISREG(st.st_mode):
        return (os.path.realpath(p) if os.path.islink(p) else p), False
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return p, True
    what = (f"leads to {os.path.realpath(p)!r}, {_kind(st.st_mode)}" if os.path.islink(p)
            else f"is {_kind(st.st_mode)}")
    raise OutputRefused(f"{p!r} {what}, not a regular file: refused (an output is written to a file, a "
                        f"character device or a FIFO, never over anything else)")


def written_in_place(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a stream (a character device or a FIFO, itself or through links) that a write
    goes into in place; ``False`` for a new or regular file (and for anything refused or unreadable)."""
    try:
        return _destination(path)[1]
    except OSError:
        return False


def output_problem(path: str | os.PathLike) -> str | None:
    """Why the output file ``path`` could not be written, or ``None``; changes nothing. For a command line
    to say before its work, not after it: a directory, a refused kind, a missing or unwritable folder (of
    the file a link leads to), a stream that may not be opened for writing."""
    p = os.fspath(path)
    if os.path.isdir(p):
        return "it is a directory; give a file path"
    try:
        target, in_place = _destination(p)
    except OutputRefused as e:
        return str(e)
    except OSError as e:
        return f"it cannot be examined ({e.strerror or e})"
    if in_place:
        return None if os.access(p, os.W_OK) else "it is not writable"
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        return f"folder {folder!r} does not exist"
    problem = folder_problem(folder)
    return None if problem is None else f"folder {folder!r}: {problem}"


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[str]:
    """A fresh temporary path in ``path``'s folder; it becomes ``path`` when the block ends without error.

    The temporary name is unique (created with ``O_EXCL``), so two writers of one target never
    write into the same temporary file; it starts with a dot, so listings of ``*.json`` skip it.
    It is created with mode 0o666 less the umask, as ``open(path, "w")`` would create the target
    (``tempfile.mkstemp``'s 0o600 would make every record private to its writer).

    A link is followed (its target's folder holds the temporary file, the target is replaced); a
    stream (a character device, a FIFO) is yielded itself, to be written in place, and nothing is
    renamed; a directory, a block device or a socket raises :class:`OutputRefused` before the block
    (the module's docstring). A block that writes in place should open the path once and write it
    sequentially: a FIFO cannot seek, and a second opening waits for a second reader.
    """
    target, in_place = _destination(path)
    if in_place:
        yield target
        return
    folder, name = os.path.split(os.path.abspath(target))
    tmp = _create_unique(folder, f".{name}.")
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_unique(folder: str, prefix: str) -> str:
    """Create an empty file ``folder/prefix<random>.tmp`` that did not exist; its path."""
    for _ in range(100):
        tmp = os.path.join(folder, f"{prefix}{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name {prefix}*.tmp in {folder}")


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` through a temporary file, or in place into a stream (:func:`replacing`)."""
    with replacing(path) as tmp:
        with open(tmp, "w", encoding=encoding, newline="") as f:
            f.write(text)


def write_binary(path: str | os.PathLike, write: Callable[[BinaryIO], Any]) -> None:
    """``write(f)`` into a temporary binary file that then replaces ``path``, or in place into a stream
    (:func:`replacing`).

    The first ``OSError`` a write into ``f`` raised is what fails the call, whatever ``write`` made
    of it: ``torch.save`` swallows the writes' errors and fails at the end with ``[enforce fail at
    inline_container.cc] unexpected pos``, so a full disk would otherwise read as a torch bug."""
    with replacing(path) as tmp:
        with open(tmp, "wb") as raw:
            f = _FirstError(raw)
            try:
                write(f)
            except Exception:
                if f.error is not None:
                    raise f.error from None
                raise
            if f.error is not None:
                raise f.error


class _FirstError:
    """A binary file that remembers the first ``OSError`` of its ``write``s (and raises it as usual)."""

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.error: OSError | None = None

    def write(self, data) -> int:
        try:
            return self.raw.write(data)
        except OSError as e:
            if self.error is None:
                self.error = e
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def folder_problem(folder: str | os.PathLike) -> str | None:
    """Why files cannot be written in ``folder`` (created first if missing), or ``None``; changes nothing.

    A folder that does not exist yet is judged by the nearest folder above it that does (where it
    would be created). Writability is tried for real, with a temporary file created and removed
    at once: permission bits say nothing for root, nor for a read-only mount.
    """
    path = os.path.abspath(os.fspath(folder))
    if os.path.exists(path) and not os.path.isdir(path):
        return "it is a file, not a folder"
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is a file, so no folder can be made under it"
    try:
        fd, tmp = tempfile.mkstemp(dir=probe, prefix=".ddz-write-check-")
    except OSError as e:
        where = "it" if probe == path else f"{probe}, where it would be created,"
        return f"{where} is not writable ({e.strerror or e})"
    os.close(fd)
    os.unlink(tmp)
    return None


def write_failure(e: BaseException) -> str:
    """A short reason for a failed write: the OS's words (``No space left on device``), not a traceback.

    ``torch.save`` reports a full disk as a ``RuntimeError`` from its C++ writer
    (``[enforce fail at inline_container.cc:...] . unexpected pos ...``): it is named as such.
    """
    if isinstance(e, OSError):  # (its file name is the temporary one: the caller names the target)
        return e.strerror or str(e) or type(e).__name__
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if "unexpected pos" in text or "inline_container" in text:
        return "the file could not be written in full (is the disk full?)"
    return f"{type(e).__name__}: {text}"


__all__ = ["replacing", "write_text", "write_binary", "folder_problem", "write_failure", "OutputRefused",
           "output_problem", "written_in_place"]
