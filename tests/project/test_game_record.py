"""The game's facts are read from their owners, not written again (issue 46, item 4).

``ddz_env.info.GAME`` declares the game's facts once, from the module that owns each: the plane sizes
(``observation.OBS_CELLS``, 1,740 cells a view, and ``PLANE_CELLS``, 60 a channel), the longest hand
(``GAME.max_decisions``, 168), the most cards a hand holds (``cards.MAX_HAND``, 20), the bomb test
(``moves.IS_BOMB_OR_ROCKET``) and the seats (``cards.NUM_SEATS``). This test reads the code (never its
strings or comments) of the package, the benchmarks, the examples and the top-level scripts, and fails on
a literal or a derivation of one of them outside its owner. It is a scan, so each rule says what it
looks for; a number that merely equals a fact (a 60-second timeout, a 1 MiB limit) is not one.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Callable, Iterable

from common import ROOT

#: where the code lives (tests are left out: they check the facts against references of their own)
SOURCES = ("ddz_env", "agents", "benchmarks", "examples")


def code_lines(text: str) -> dict[int, str]:
    """Line number -> the line's code tokens joined by spaces (strings, f-strings and comments left out)."""
    skip = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}
    fstring = {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, n)}
    out: dict[int, list[str]] = {}
    depth = 0  # inside an f-string (Python 3.12+ tokenizes its parts)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in fstring:
            depth += {"FSTRING_START": 1, "FSTRING_END": -1}.get(tokenize.tok_name[tok.type], 0)
            continue
        if depth or tok.type in skip:
            continue
        out.setdefault(tok.start[0], []).append(tok.string)
    return {n: " ".join(toks) for n, toks in out.items()}


def _under(*folders: str) -> Callable[[str], bool]:
    return lambda path: path.split("/")[0] in folders


def _anywhere(path: str) -> bool:
    return True


#: (what, owner file, which files, the pattern over a line's code tokens, what it found stands for)
RULES = (
    ("1740 (the cells of a view)", "ddz_env/observation.py", _anywhere, re.compile(r"(?<![\w.])1_?740(?![\w.])"),
     "observation.OBS_CELLS"),
    ("a view's cells derived from OBS_SHAPE", "ddz_env/observation.py", _anywhere,
     re.compile(r"\bprod \( (np \. )?(array \( )?OBS_SHAPE\b"), "observation.OBS_CELLS"),
    ("60 as the cells of a channel", "ddz_env/observation.py", _anywhere,
     re.compile(r"(?i)^(?=.*(plane|reshape|cells)).*(?<![\w.])60(?![\w.])"), "observation.PLANE_CELLS"),
    ("a channel's cells derived as 4 x 15", "ddz_env/observation.py", _anywhere,
     re.compile(r"(?<![\w.])4 \* (NUM_RANKS|15)\b|\b(NUM_RANKS|15) \* 4(?![\w.])"), "observation.PLANE_CELLS"),
    ("168 (the longest hand's decisions)", "ddz_env/info.py", _anywhere, re.compile(r"(?<![\w.])168(?![\w.])"),
     "GAME.max_decisions"),
    ("20 as a hand size", "ddz_env/cards.py", _under("ddz_env", "agents"),
     re.compile(r"(?<!<< )(?<!\*\* )(?<!\*\*)(?<![\w.])20(?![\w.])(?! \*\*)"), "cards.MAX_HAND"),
    ("20 as a hand size (a deck cut)", "ddz_env/cards.py", _under("benchmarks", "examples", "."),
     re.compile(r"(?i)^(?=.*\b\w*(deck|hand)\w*\b).*(?<![\w.])20(?![\w.])"), "cards.MAX_HAND"),
    ("the largest hand derived", "ddz_env/cards.py", _anywhere,
     re.compile(r"\bHAND_SIZE \+ (BOTTOM_SIZE|3)\b"), "cards.MAX_HAND"),
    ("the bomb test (a bomb or the rocket)", "ddz_env/moves.py", _anywhere,
     re.compile(r"\bIS_BOMB \| IS_ROCKET\b|\bIS_ROCKET \| IS_BOMB\b"
                r"|MoveType \. BOMB \) ?, MoveType \. ROCKET|MoveType \. ROCKET \) ?, MoveType \. BOMB"
                r"|MoveType \. BOMB , MoveType \. ROCKET|MoveType \. ROCKET , MoveType \. BOMB"),
     "moves.IS_BOMB_OR_ROCKET"),
    ("three seats written out", "ddz_env/cards.py", _under("ddz_env"),
     re.compile(r"\brange \( 3 \)|\barange \( 3 \)|\b(zeros|full|empty) \( 3\b|% 3(?![\w.])|\[ 17 , 17 , 17 \]"
                r"|\( [BK] , 3 \)|\* 3 \+"),
     "cards.NUM_SEATS / GAME.num_seats"),
)
#: lines a rule matches that are not the fact (file, a piece of the line's code): DouZero's card codes
#: (3..14, 17, 20, 30) are its encoding of the ranks, not hand sizes
ALLOWED = (("agents/douzero/encoding.py", "DOUZERO_CARD = np . array ( [ 3 , 4 ,"),)


def source_files(root: Path) -> Iterable[Path]:
    for folder in SOURCES:
        yield from sorted((root / folder).rglob("*.py"))
    yield from sorted(root.glob("*.py"))


def findings(sources: dict[str, str]) -> list[str]:
    """``path:line: what (read owner's name)`` for every rule's match in ``sources`` (relative path -> text)."""
    out = []
    for path, text in sorted(sources.items()):
        top = path if "/" in path else "./" + path
        lines = code_lines(text)
        for what, owner, where, pattern, read in RULES:
            if path == owner or not where(top):
                continue
            for n, code in sorted(lines.items()):
                if pattern.search(code) and not any(path == p and piece in code for p, piece in ALLOWED):
                    out.append(f"{path}:{n}: {what}; read {read} ({owner})  [{code[:100]}]")
    return out


def test_the_game_facts_are_read_from_their_owners_not_written_again():
    sources = {p.relative_to(ROOT).as_posix(): p.read_text() for p in source_files(ROOT)}
    found = findings(sources)
    assert not found, "facts written outside their owner:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_fact():
    """Each rule finds what it names in code, and nothing in strings or comments."""
    samples = {
        "agents/a.py": "X = 1740\n",
        "agents/b.py": "import numpy as np\nX = int(np.prod(OBS_SHAPE))\n",
        "agents/c.py": "PLANE = 60\n",
        "agents/d.py": "left = planes.reshape(B, 3, 60)\n",
        "agents/e.py": "cells = 4 * NUM_RANKS\n",
        "agents/f.py": "_MAX = 168\n",
        "agents/g.py": "MAX_HAND = 20\n",
        "benchmarks/h.py": "x = sorted(deck[:20])\n",
        "agents/i.py": "big = IS_BOMB | IS_ROCKET\n",
        "ddz_env/j.py": "for s in range(3):\n    pass\n",
        "ddz_env/k.py": "order = [(seat + 1) % 3]\n",
    }
    found = findings(samples)
    assert {f.split(":")[0] for f in found} == set(samples), found
    quiet = {
        "agents/a.py": '"""planes (B, 1740), 60 cells a channel, 168 decisions, 20 cards, range(3)"""\nX = 1  # 1740\n',
        "agents/b.py": "LIMIT = 1 << 20\nSIZE = 2**20\nTIMEOUT = 60\n",
        "benchmarks/c.py": "p.add_argument('--n', default=20)\nwarm = 60\n",
        "agents/d.py": "t = f'{x} of 1740 cells, 20 cards'\n",
    }
    assert findings(quiet) == []
