"""Evaluation workers from a main program they cannot re-create. ``evaluate(..., workers=2)`` in a script read
on standard input (``python - <<EOF``) stopped within seconds with "an evaluation worker process died (killed,
or out of memory?)", whatever the agents: a spawned worker runs the main script again from its file, and
'<stdin>' is none. The same message came from an agent object whose class was defined in ``python -c`` code
(nowhere for a worker to import it from). Now the deals are played in this process, said in one line, and the
figures are those of ``workers=1``."""
from __future__ import annotations

import json
import subprocess
import sys

from common import ROOT

#: rule vs random with two workers and with one; the league too (it plays through the same workers)
SCRIPT = """
import json
from agents.evaluation import evaluate
from agents.evaluation.league import play_league
two = evaluate("rule", "random", deals=3, seed=5, workers=2)
one = evaluate("rule", "random", deals=3, seed=5, workers=1)
league = play_league(["rule", "random"], deals=2, seed=5, workers=2)
print(json.dumps({"two": two["A"]["mean_score"], "one": one["A"]["mean_score"], "league": len(league.pairs)}))
"""


def python(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], input=stdin, cwd=ROOT, capture_output=True, text=True,
                          timeout=240)


def notices(p: subprocess.CompletedProcess) -> list[str]:
    assert p.returncode == 0 and "Traceback" not in p.stderr and "died" not in p.stderr, p.stderr[-1500:]
    return [x for x in p.stderr.splitlines() if x.strip()]


def test_workers_from_a_script_read_on_standard_input_play_in_this_process_and_say_why_once():
    p = python(["-"], stdin=SCRIPT)
    lines = notices(p)
    # one line for the evaluation and the league alike (the same reason is said once per process)
    assert len(lines) == 1 and "'<stdin>' has no file" in lines[0] and "in this process" in lines[0], lines
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["two"] == out["one"] and out["league"] == 1


def test_an_agent_whose_class_is_defined_in_python_c_code_plays_in_this_process():
    code = ("from agents import RuleAgent\nfrom agents.evaluation import evaluate\n"
            "class Mine(RuleAgent):\n    pass\n"
            "two = evaluate(Mine(), 'random', deals=3, seed=5, workers=2)\n"
            "one = evaluate(Mine(), 'random', deals=3, seed=5, workers=1)\n"
            "print(two['A']['mean_score'] == one['A']['mean_score'])\n")
    p = python(["-c", code])
    lines = notices(p)
    assert len(lines) == 1 and "class Mine" in lines[0] and "in this process" in lines[0], lines
    assert p.stdout.strip() == "True"


def test_a_script_file_still_plays_in_worker_processes(tmp_path):
    """The control: from a file, the workers start (no notice) and give the figures of one process."""
    script = tmp_path / "evaluate_two.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nif __name__ == '__main__':\n"
                      + "".join("    " + line + "\n" for line in SCRIPT.strip().splitlines()))
    p = python([str(script)])
    assert notices(p) == []
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["two"] == out["one"] and out["league"] == 1
