"""One reader of scheme specs (issue 46, item 5): ``agents.loader.parse_spec`` takes ``scheme:TARGET?k=v&k2=v2``
apart for every scheme, each the way its factory read it before (three parsers, one per scheme, did)."""
from __future__ import annotations

import pytest

from agents.loader import SchemeSpec, parse_spec


@pytest.mark.parametrize("text, target, query, options", [
    # search: the base is a spec and may hold a "?": the options follow the last one, joined by "&"
    ("search:pretrained", "pretrained", None, ()),
    ("search:rule?samples=2&candidates=", "rule", "samples=2&candidates=", (("samples", "2"), ("candidates", ""))),
    ("search:douzero:d?bidder=rule?samples=8", "douzero:d?bidder=rule", "samples=8", (("samples", "8"),)),
    ("search:rule?seed", "rule", "seed", (("seed", None),)),
    ("search:", "", None, ()),
    # douzero: one option, bidder=SPEC, whose value runs to the end
    ("douzero:d", "d", None, ()),
    ("douzero:d?bidder=search:rule?samples=2&candidates=2", "d", "bidder=search:rule?samples=2&candidates=2",
     (("bidder", "search:rule?samples=2&candidates=2"),)),
    ("douzero:d?", "d", "", (("", None),)),
    # rllib: options after the first "?"
    ("rllib:/r/ck?trust=yes", "/r/ck", "trust=yes", (("trust", "yes"),)),
    # ext and http: options after the first "?" (the command and the URL hold none)
    ("ext:python3 'my bots/b.py' --fast?timeout=2&text=no", "python3 'my bots/b.py' --fast", "timeout=2&text=no",
     (("timeout", "2"), ("text", "no"))),
    ("http://127.0.0.1:8765/seat?timeout=1", "//127.0.0.1:8765/seat", "timeout=1", (("timeout", "1"),)),
    ("http:https://example.org/", "https://example.org/", None, ()),
    # sb3 and onnx: no options, a path may hold a "?"
    ("sb3:/m/a?b.zip", "/m/a?b.zip", None, ()),
    ("onnx:x?y.onnx", "x?y.onnx", None, ()),
])
def test_each_scheme_is_read_as_its_factory_read_it(text, target, query, options):
    spec = parse_spec(text)
    assert spec == SchemeSpec(text, text.partition(":")[0], target, query, options)


def test_a_text_that_is_no_scheme_spec_is_refused():
    with pytest.raises(ValueError, match="is no scheme spec"):
        parse_spec("rule")


@pytest.mark.parametrize("spec, message", [
    ("rllib:/nowhere?trust=maybe", "rllib:DIR takes one option, ?trust=yes (got 'trust=maybe')"),
    ("rllib:/nowhere?trust=yes&trust=yes", "rllib:DIR takes one option"),
    ("rllib:/nowhere?", "rllib:DIR takes one option, ?trust=yes (got '')"),
])
def test_the_rllib_option_is_checked_by_its_factory(spec, message):
    pytest.importorskip("torch")
    from agents import load

    with pytest.raises(ValueError) as e:
        load(spec)
    assert message in str(e.value)
