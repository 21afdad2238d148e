"""The DMC learner's actor processes, found from outside (the tests kill them as the out-of-memory killer would)."""
import subprocess


def actor_pids(pid: int) -> list[int]:
    """The actor processes of the learner ``pid`` (its spawned children; not the resource tracker), sorted."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    found = []
    for k in map(int, out.split()):
        try:
            cmd = open(f"/proc/{k}/cmdline", "rb").read()
        except OSError:
            continue
        if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
            found.append(k)
    return sorted(found)
