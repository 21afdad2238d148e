"""
# Dou Dizhu (斗地主), PettingZoo AEC environment

The full 2016 competitive rulebook: bidding 1/2/3, the farmers' secret doubling,
the landlord's redouble, bombs, rocket, spring and anti-spring, scored by the
rulebook (see ``RULES.md``, rulings R1-R22).

| Import             | `from ddz_env import env, raw_env`, or `import ddz_env` then `pettingzoo.make("aec", "ddz/dou_dizhu-v0")` |
|--------------------|--------------------------------------------------------------------|
| Agents             | `player_0`, `player_1`, `player_2` (seats; roles change every hand) |
| Action space       | `Discrete(24648)`, the same for every phase                        |
| Observation        | `Dict(observation=Box(0, 1, (29, 4, 15), int8), action_mask=Box(0, 1, (24648,), int8))` |
| Reward             | the signed rulebook score (R19) of the hand, to every seat at the end |
| Parallel API       | no (turn-based)                                                    |

## Actions (ids are stable)

{ACTION_TABLE}

`env.unwrapped.action_string(a)` names an action, `legal_actions()` lists the current
agent's legal ids and `default_action()` gives R20's timeout action.

`env.unwrapped.sample_deals(agent, n, seed=None)` draws `n` deals (`ddz_env.rules.Deal`)
consistent with what `agent` knows now: its own hand as dealt, every public play, the
counts, the bottom once revealed, R13's kicker rule; each, replayed with the public history
(`ddz_env.beliefs.replay_for_seat`), gives the agent exactly its observation and action mask. Drawn
exactly from the distribution a shuffled deck gives (see `ddz_env.beliefs`), seeded by `seed`
(an int or a `numpy.random.Generator`). An agent that has only its observation uses
`ddz_env.beliefs.sample_hidden(planes, n)`.

## Observation planes

Each channel is a 4 x 15 plane, a column per rank `3456789TJQKA2BR`; cards are
thermometer-coded (k cards of a rank light the first k rows). Seats are relative to
the observer: 0 self, 1 next (acts after it), 2 previous.

{LAYOUT_TABLE}

The mask is all zeros for agents not on turn and after the hand ends.

## Options (constructor keyword arguments)

| option        | default   | meaning |
|---------------|-----------|---------|
| `reward`      | `"score"` | `"score"`: the R19 signed score; `"win"`: +1 / -1 by side |
| `reward_scale`| `1.0`     | multiplies every reward |
| `rules`       | `"rulebook"` | which phases a hand has: a `ddz_env.Rules`, a preset (`"rulebook"`; `"douzero"`: no bidding, a fixed landlord at bid 1, no doubling, the DouZero / RLCard setting) or fields (`{"doubling": False}`, `"bidding=false"`) |
| `spectator`   | `False`   | `render()` in text shows every hand (`"rgb_array"` always does) |
| `render_mode` | `None`    | `"ansi"` (returns the table as text), `"human"` (prints it) or `"rgb_array"` (returns a picture of the table, an `(640, 960, 3)` `uint8` array: `ddz_env.render`; needs the `render` extra, Pillow) |

`reset(seed, options)` accepts `options={"first_bidder": s}` (with bidding off, the
landlord seat: `{"landlord": s}`) and a fixed deal: a `ddz_env.rules.Deal` or
`options={"deal": {"hands": [h0, h1, h2], "bottom": b, "first_bidder": s}}`
(card strings or count vectors). Without them the deal and the first bidder (or the
fixed landlord) come from the seeded generator; after a void hand (all passed) the
next `reset()` deals afresh with the next seat as first bidder (R4).

## Infos
Numbers only: `phase`, `landlord` (-1 before), `role` (-1 before), `void` (0/1),
`seat`.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .actions import NUM_ACTIONS, action_table, action_to_string
from .beliefs import sample_deals
from .info import GAME
from .classic import ClassicWrapper, stock_wrappers
from .game import Game, IllegalActionError, Phase
from .rules import Deal, Rules, as_seat, deal_hand
from .rules import rewards as hand_rewards
from .observation import OBS_SHAPE, layout_table, observe_game

if __doc__ is not None:  # the doc page's tables come from the one source of each (python -OO strips docstrings)
    __doc__ = __doc__.replace("{ACTION_TABLE}", action_table("markdown")).replace("{LAYOUT_TABLE}",
                                                                                   layout_table("markdown"))

AGENTS = list(GAME.agents)
_SEAT_OF = {a: i for i, a in enumerate(AGENTS)}


def _seat_of(agent: str) -> int:
    try:
        return _SEAT_OF[agent]
    except (KeyError, TypeError):  # (TypeError: an unhashable agent)
        raise ValueError(f"unknown agent {agent!r}: the agents are {AGENTS}") from None


def env(**kwargs) -> AECEnv:
    """The environment with the checks of PettingZoo's classic wrapper stack (illegal move: -1 and
    the hand ends), in one layer: `ddz_env.classic.ClassicWrapper`."""
    return ClassicWrapper(raw_env(**kwargs), illegal_reward=-1)


def stock_env(**kwargs) -> AECEnv:
    """``raw_env`` in PettingZoo's own three wrappers (what `env` returned up to 0.1.0): the
    reference `ddz_env.classic.ClassicWrapper` is tested against, and a fallback."""
    return stock_wrappers(raw_env(**kwargs))


class raw_env(AECEnv, EzPickle):
    metadata = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "dou_dizhu_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, reward: str = "score", reward_scale: float = 1.0, rules: Rules | str | None = None,
                 spectator: bool = False, render_mode: str | None = None):
        rules = Rules.of(rules)
        EzPickle.__init__(self, reward=reward, reward_scale=reward_scale, rules=rules, spectator=spectator,
                          render_mode=render_mode)
        super().__init__()
        if reward not in ("score", "win"):
            raise ValueError(f"reward must be 'score' or 'win', got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if render_mode == "rgb_array":  # a missing Pillow said now, not at the first frame
            from .render import require_pillow

            require_pillow()
        self.reward_kind = reward
        self.reward_scale = float(reward_scale)
        self.rules = rules
        self.spectator = bool(spectator)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self._action_space = spaces.Discrete(NUM_ACTIONS)
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(0, 1, OBS_SHAPE, dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        self.action_spaces = {a: self._action_space for a in AGENTS}
        self.observation_spaces = {a: self._observation_space for a in AGENTS}
        self._rng = np.random.default_rng()
        self._next_first_bidder: int | None = None
        self.game: Game | None = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    # ------------------------------------------------------------------ reset
    def _reset_plan(self, options: Mapping[str, Any] | None, warn: bool = True) -> tuple[dict[str, Any], Game | None]:
        """``reset``'s options checked, changing nothing: ``(options, game)``, ``game`` the hand of a
        given deal (else ``None``). ``TypeError``/``ValueError`` naming the bad option."""
        if options is None:
            options = {}
        elif not isinstance(options, Mapping):
            raise TypeError(f"reset: options must be a dict or None, got {type(options).__name__} {options!r}")
        options = dict(options)
        unknown = set(options) - {"deal", "first_bidder", "landlord"}
        if unknown and warn:  # not an error: generic tools (e.g. PettingZoo's api_test) pass options of their own
            import gymnasium

            gymnasium.logger.warn(f"reset: ignoring unknown option(s) {sorted(unknown)}; known: deal, first_bidder, landlord")
        for key in ("first_bidder", "landlord"):  # None: not given
            if options.get(key) is None:
                options.pop(key, None)
            else:
                options[key] = as_seat(options[key], f"reset: options[{key!r}]")
        if "deal" not in options:
            return options, None
        d = options["deal"]
        if not isinstance(d, Deal) and (not isinstance(d, Mapping) or "hands" not in d or "bottom" not in d):
            raise ValueError("options['deal'] must be a dict with 'hands' (3 hands), 'bottom' and 'first_bidder', "
                             f"got {d!r}")
        try:
            if not isinstance(d, Deal):  # (a dict without a first bidder takes options' first_bidder)
                d = Deal.of({**d, "first_bidder": d.get("first_bidder", options.get("first_bidder", 0))})
            game = self._game_of(d, options)
        except TypeError as e:
            raise TypeError(f"reset: bad options['deal']: {e}") from e
        except ValueError as e:
            raise ValueError(f"reset: bad options['deal']: {e}") from e
        return options, game

    def _game_of(self, deal: Deal, options: Mapping[str, Any]) -> Game:
        """The hand of ``deal`` under the env's rules (``Game.from_deal``): with bidding off its landlord is
        ``options["landlord"]``, else the deal's, else its first bidder; with bidding on a deal's landlord is
        not read."""
        if self.rules.bidding:
            if deal.landlord is not None:
                deal = Deal._trusted(deal.hands, deal.bottom, deal.first_bidder)
            return Game.from_deal(deal, rules=self.rules)
        return Game.from_deal(deal, rules=self.rules, landlord=options.get("landlord"))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # validate first (the seed, then the options), then change: a rejected reset leaves the
        # generator, the R4 carry-over and the current hand as they were
        rng = np.random.default_rng(seed) if seed is not None else None
        options, game = self._reset_plan(options)
        if game is None:
            deal = deal_hand(rng if rng is not None else self._rng)
            fb = options.get("first_bidder")
            if fb is None:
                carried = self._next_first_bidder if rng is None else None  # a new seed drops R4's carry-over
                fb = carried if carried is not None else deal.first_bidder
            if fb != deal.first_bidder:
                deal = Deal._trusted(deal.hands, deal.bottom, fb)
            game = self._game_of(deal, options)
        if rng is not None:
            self._rng = rng
        self.game = game
        self._next_first_bidder = None
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.game.current_player]
        self._info_key = None
        self._info_phase = None
        self._update_infos()

    # ------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        g = self.game
        if g is None:
            raise RuntimeError("observe() before reset(): call reset() first")
        seat = _seat_of(agent)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if seat == g.current_player and not self.terminations[agent]:  # (current_player is -1 once over)
            mask[g.legal_actions()] = 1
        return {"observation": observe_game(g, seat), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``, with the two calls that have no agent to report on made clear:
        before ``reset`` an ``AttributeError`` with OrderEnforcingWrapper's words, and once every
        agent has stepped out (after the hand) a ``RuntimeError`` as ``step`` gives then."""
        if self.game is None:
            raise AttributeError("agent_selection cannot be accessed before reset: call reset() before last()")
        if not self.agents:
            raise RuntimeError("last() after the hand ended and every agent has been removed (each took its "
                               "step(None)): call reset() for a new hand")
        return super().last(observe)

    # ------------------------------------------------------------------ step
    def step(self, action) -> None:
        try:
            agent = self.agent_selection
            dead = self.terminations[agent] or self.truncations[agent]
        except (AttributeError, KeyError):  # (no cost on the normal path)
            if self.game is None:
                raise RuntimeError("step() before reset(): call reset() first") from None
            raise RuntimeError("step() after the hand ended and every agent has been removed (each took its "
                               "step(None)): call reset() for a new hand") from None
        if dead:
            self._was_dead_step(action)
            return
        err = self.try_step(agent, action)
        if err is not None:
            g = self.game
            try:
                a = int(action)
            except (TypeError, ValueError):
                a = action
            raise ValueError(
                f"illegal action {a!r} for {agent} in phase {g.phase.name}: {len(g.legal_actions())} legal actions "
                f"(see env.unwrapped.legal_actions()); {err}"
            ) from None

    def try_step(self, agent: str, action) -> IllegalActionError | None:
        """``step`` for the live ``agent`` on turn: the game's ``IllegalActionError`` returned (nothing
        changed) instead of raised; ``ddz_env.classic.ClassicWrapper`` ends the hand on it (a class that
        overrides ``step`` without ``try_step`` makes the wrapper call its ``step``)."""
        g = self.game
        try:
            g.step(action)
        except IllegalActionError as e:
            return e
        self._cumulative_rewards[agent] = 0.0
        if g.is_over:
            if g.void:
                self._next_first_bidder = g.next_first_bidder  # R4
            values = hand_rewards(g.scores, g.winner, g.landlord, self.reward_kind, self.reward_scale)
            self.rewards = {a: float(values[i]) for i, a in enumerate(AGENTS)}
            self.terminations = {a: True for a in AGENTS}
            self._accumulate_rewards()
            self._update_infos()
            # every agent is now terminated; PettingZoo then takes the dead steps (step(None))
            self.agent_selection = AGENTS[(AGENTS.index(agent) + 1) % GAME.num_seats]
        else:
            # the rewards stay all 0.0 until the hand ends (reset sets them)
            self.agent_selection = AGENTS[g.current_player]
            if g.phase != self._info_phase:
                self._update_infos()
        if self.render_mode == "human":
            self.render()
        return None

    def _update_infos(self) -> None:
        """Refresh the infos; they change only with the phase (the landlord, void flag and roles with it)."""
        g = self.game
        key = (int(g.phase), g.landlord, g.void)
        self._info_phase = g.phase
        if key == self._info_key and all(a in self.infos for a in AGENTS):
            return
        self._info_key = key
        for i, a in enumerate(AGENTS):
            info = self.infos.setdefault(a, {})
            info["phase"] = key[0]
            info["landlord"] = int(g.landlord)
            info["role"] = int(g.role(i))
            info["void"] = int(g.void)
            info["seat"] = i

    # ------------------------------------------------------------------ helpers for agents
    def legal_actions(self, agent: str | None = None) -> np.ndarray:
        """Legal action ids of ``agent`` (default: the agent to act); empty if it is not on turn."""
        g = self._game("legal_actions")
        seat = _seat_of(agent or self.agent_selection)
        if g.is_over or seat != g.current_player:
            return np.zeros(0, dtype=np.int64)
        return g.legal_actions()

    @staticmethod
    def action_string(action: int) -> str:
        """Readable name of an action id (a move's cards, ``"pass"``, ``"bid 2"``, ``"double"``...)."""
        return action_to_string(action)

    def default_action(self) -> int:
        """R20's timeout action for the agent to act."""
        return self._game("default_action").default_action()

    def sample_deals(self, agent: str, n: int, seed: int | np.random.Generator | None = None,
                     prior: str = "deck") -> list[Deal]:
        """``n`` deals consistent with what ``agent`` knows now (`ddz_env.beliefs.sample_deals`):
        replayed with the public history each gives ``agent`` exactly its observation and mask.
        ``ValueError`` for an unknown agent, a bad ``n`` or a hand that is over."""
        return sample_deals(self._game("sample_deals"), _seat_of(agent), n, seed, prior)

    @property
    def phase(self) -> Phase:
        return self._game("phase").phase

    def _game(self, what: str) -> Game:
        if self.game is None:
            raise RuntimeError(f"{what} before reset(): call reset() first")
        return self.game

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        """The table: text (``"ansi"``; ``"human"`` prints it), or a picture (``"rgb_array"``: an ``(H, W, 3)``
        ``uint8`` array drawn by `ddz_env.render.render_game` for people watching, every hand face up)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode: pass render_mode='ansi', 'human' or "
                                  "'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            from .render import render_game

            return render_game(self.game, AGENTS)
        text = self.game.render(spectator=self.spectator) if self.game else "(no hand: call reset())"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
