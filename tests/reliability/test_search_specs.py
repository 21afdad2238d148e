"""Search specs are bounded when they load. ``search:search:...`` (a search whose base is a search) and
``rollout=search:...`` loaded, and then each decision ran a search in every step of every rollout: practically
a hang. ``search:...?seed=-1`` loaded and failed at the first searched decision (numpy takes no negative seed).
Now each is a one-line ``ValueError`` naming the option, raised before any agent loads."""
from __future__ import annotations

import pytest

from agents import load
from agents.search.agent import SearchAgent
from common import needs_torch


def one_line(spec: str) -> str:
    with pytest.raises(ValueError) as e:
        load(spec)
    message = str(e.value)
    assert "\n" not in message and message.startswith(repr(spec)), message
    return message


@pytest.mark.parametrize("spec, role", [
    ("search:search:pretrained", "base"),
    ("search:search:rule?samples=2", "base"),
    ("search:pretrained?rollout=search:rule", "rollout"),
    ("search:rule?rollout=search:pretrained&samples=2", "rollout"),
    ("search:rule?belief=search:rule", "belief"),
])
def test_a_search_within_a_search_is_refused_at_load(spec, role):
    message = one_line(spec)
    assert f"the {role} 'search:" in message and "is itself a search" in message
    assert f"give a {role} that does not search" in message


def test_the_refusal_comes_before_any_agent_loads():
    """The inner agent is not even looked up: an unknown one still gets the nesting's message."""
    assert "is itself a search" in one_line("search:search:nosuchagent")
    assert "is itself a search" in one_line("search:nosuchagent?rollout=search:rule")


@pytest.mark.parametrize("spec, option", [
    ("search:pretrained?seed=-1", "seed must be a whole number >= 0, got -1"),
    ("search:nosuchagent?seed=-7", "seed must be a whole number >= 0"),
    ("search:rule?z=-1", "z must be a finite number >= 0"),
    ("search:rule?z=inf", "z must be a finite number >= 0"),
    ("search:rule?temperature=0", "temperature must be a positive number"),
    ("search:rule?samples=300&candidates=300", "samples x candidates = 90,000 rollouts per decision"),
])
def test_bad_numbers_are_refused_at_load_naming_the_option(spec, option):
    assert option in one_line(spec)


def test_the_constructor_refuses_the_same():
    """An agent object built in code gets the checks a spec gets."""
    rule = load("rule")
    inner = SearchAgent(rule, samples=2)
    for kwargs in ({"rollout": inner}, {"belief": inner}):
        with pytest.raises(ValueError, match="is itself a search"):
            SearchAgent(rule, **kwargs)
    with pytest.raises(ValueError, match="base .* is itself a search"):
        SearchAgent(inner)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="search: seed must be a whole number >= 0"):
            SearchAgent(rule, seed=bad)
    with pytest.raises(ValueError, match="search: margin must be a finite number"):
        SearchAgent(rule, margin="1")


def test_valid_specs_still_load():
    agent = load("search:rule?seed=3&samples=2&rollout=random&belief=rule")
    assert isinstance(agent, SearchAgent) and agent.seed == 3 and agent.samples == 2


@needs_torch
def test_a_valid_pretrained_search_still_loads():
    agent = load("search:pretrained?seed=0&samples=4&candidates=2&rollout=pretrained")
    assert isinstance(agent, SearchAgent) and (agent.samples, agent.candidates) == (4, 2)
