"""One seat of Dou Dizhu as a single-agent Gymnasium environment.

It lives with the agents, above the rules core: the other seats are played by agents
(``ddz_env`` never imports ``agents``).

`DouDizhuSeatEnv` puts a learner at one seat of the AEC environment
(`ddz_env.env.raw_env`); the two other seats are played by given agents
(``agents.load`` names or agent objects, default ``"random"``). What single-agent
libraries (Stable-Baselines3, sb3-contrib's ``MaskablePPO``...) need:

| Item          | Value |
|---------------|-------|
| Id            | ``gymnasium.make("ddz/DouDizhuSeat-v0", ...)`` after ``import agents`` (which calls `register_gymnasium`) |
| Observation   | ``Box(0, 1, (29, 4, 15), int8)``: the learning seat's planes (see ``ddz_env.env``) |
| Action space  | ``Discrete(24648)``, the ids of ``ddz_env.env`` (bid, double, redouble and play) |
| Mask          | ``env.action_masks()`` -> bool ``(24648,)``; also ``info["action_mask"]`` if ``mask_in_info`` |
| Reward        | 0 until the hand ends, then the learning seat's reward from the AEC env: the R19 score (``reward="score"``, times ``reward_scale``) or +1/-1 (``reward="win"``) |
| Episode       | one hand, from the learning seat's first decision to the end of the hand |
| Illegal action| ``ValueError`` (the state is left intact); ``on_illegal="timeout"`` plays R20's timeout action instead and reports ``info["illegal"] = 1``. An action that is no integer id (a float, a longer array) is a ``TypeError`` either way, never truncated |

Episodes and hands:

* ``reset()`` deals a hand and lets the opponents act until the learning seat has a
  decision. A hand in which the learning seat never acts (e.g. with bidding off, the
  seat is a farmer and the landlord plays all 20 cards in one move) is *not* an
  episode: ``reset`` deals again, internally, and counts it in ``info["skipped_hands"]``;
  such hands contribute nothing (no reward, no step). With a fixed deal
  (``options={"deal": ...}``) there is nothing to redeal, so ``reset`` raises ``ValueError``.
* A void hand (all three passed the bidding, R4) is an episode that ends with reward 0
  and ``info["void"] == 1``; the next ``reset()`` deals afresh with the next seat first to
  bid, as the AEC env does.
* When the hand ends, ``info`` holds ``"scores"`` (the rulebook scores of the three
  seats, unscaled, ``int64 (3,)``), ``"score"`` (the learning seat's) and ``"winner"``.

Seeding: ``reset(seed=s)`` seeds the deal, the seat choice (``seat=None``: a random
seat per episode) and the opponents; the same seed and the same actions give the
same episode.
"""
from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ddz_env.actions import NUM_ACTIONS, as_action_id
from ddz_env.env import AGENTS, raw_env
from ddz_env.game import as_seat
from ddz_env.observation import OBS_SHAPE, observe_game

from ..loader import load
from . import SEAT_ENV_ID, register_gymnasium  # noqa: F401 (the one registration; re-exported here)

#: reset() gives up after this many hands in a row in which the learning seat never acted
MAX_SKIPPED_HANDS = 1000


def _load_opponent(spec: Any) -> Any:
    if isinstance(spec, str):
        return load(spec)
    if not hasattr(spec, "act"):
        raise TypeError(f"an opponent is an agents.load name or an object with act(observation), got {spec!r}")
    return spec


class DouDizhuSeatEnv(gymnasium.Env):
    """A single learning seat of Dou Dizhu; the other two seats are played by ``opponents``.

    Args:
        seat: the learning seat, 0, 1 or 2; ``None`` (default) draws one per episode.
        opponents: an agent spec for both other seats, or a sequence of two (the seats
            after and before the learning seat, in play order). A spec is an
            ``agents.load`` name (``"random"``, ``"rule"``, a checkpoint path) or an object
            with ``act(observation) -> int`` (any agent). Each gets its own instance.
        on_illegal: ``"raise"`` (default: ``ValueError``) or ``"timeout"`` (play R20's
            timeout action, ``info["illegal"] = 1``; useful for generic API checkers that
            sample unmasked actions).
        mask_in_info: also put the bool mask in ``info["action_mask"]``.
        reward, reward_scale, rules, spectator, render_mode: passed to
            `ddz_env.env.raw_env`.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(self, seat: int | None = None, opponents: Any = "random", *, on_illegal: str = "raise",
                 mask_in_info: bool = False, reward: str = "score", reward_scale: float = 1.0,
                 rules: Any = None, spectator: bool = False,
                 render_mode: str | None = None):
        super().__init__()
        if seat is not None:
            try:
                seat = as_seat(seat)
            except ValueError:
                raise ValueError(f"seat must be 0, 1, 2 or None (random per episode), got {seat!r}") from None
        if on_illegal not in ("raise", "timeout"):
            raise ValueError(f"on_illegal must be 'raise' or 'timeout', got {on_illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.fixed_seat = seat
        self.on_illegal = on_illegal
        self.mask_in_info = bool(mask_in_info)
        if render_mode == "rgb_array":  # a missing Pillow said now (the 'render' extra), not at the first frame
            from ddz_env.render import require_pillow

            require_pillow()
        self.render_mode = render_mode
        self.aec = raw_env(reward=reward, reward_scale=reward_scale, rules=rules, spectator=spectator, render_mode=None)
        self._render_aec_mode = render_mode
        if isinstance(opponents, (str, bytes)) or hasattr(opponents, "act"):
            opponents = [opponents, opponents]
        opponents = list(opponents)
        if len(opponents) != 2:
            raise ValueError(f"opponents: one spec or a sequence of two, got {len(opponents)}")
        # each seat its own instance when given by name (agents may keep per-hand state)
        self.opponents = [_load_opponent(o) for o in opponents]
        self.observation_space = spaces.Box(0, 1, OBS_SHAPE, dtype=np.int8)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.seat = seat if seat is not None else 0
        self._done = True
        self._skipped = 0

    # ------------------------------------------------------------------ helpers
    @property
    def game(self):
        """The `ddz_env.game.Game` of the current hand."""
        return self.aec.game

    @property
    def agent(self) -> str:
        """The learning seat's agent name (``player_<seat>``)."""
        return AGENTS[self.seat]

    def action_masks(self) -> np.ndarray:
        """Bool ``(24648,)``: the learning seat's legal actions (all ``False`` once the hand is over)."""
        g = self.aec.game
        if g is None or g.is_over or g.current_player != self.seat:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return g.legal_action_mask()

    def legal_actions(self) -> np.ndarray:
        """The learning seat's legal action ids (empty once the hand is over)."""
        g = self.aec.game
        if g is None or g.is_over or g.current_player != self.seat:
            return np.zeros(0, dtype=np.int64)
        return g.legal_actions()

    def action_string(self, action: int) -> str:
        return self.aec.action_string(action)

    def _opponent(self, seat: int):
        return self.opponents[0] if seat == (self.seat + 1) % 3 else self.opponents[1]

    def _play_opponents(self) -> None:
        g = self.aec.game
        while not g.is_over and g.current_player != self.seat:
            agent = AGENTS[g.current_player]
            a = self._opponent(g.current_player).act(self.aec.observe(agent))
            self.aec.step(a)  # ValueError if an opponent plays an illegal action (or a float: never truncated)

    def _obs(self) -> np.ndarray:
        return observe_game(self.aec.game, self.seat)

    def _info(self) -> dict[str, Any]:
        g = self.aec.game
        info: dict[str, Any] = {
            "seat": self.seat,
            "phase": int(g.phase),
            "landlord": int(g.landlord),
            "role": int(g.role(self.seat)),
            "void": int(g.void),
            "skipped_hands": self._skipped,
        }
        if g.is_over:
            info["scores"] = np.asarray(g.scores, dtype=np.int64).copy()
            info["score"] = int(g.scores[self.seat])
            info["winner"] = int(g.winner)
        if self.mask_in_info:
            info["action_mask"] = self.action_masks()
        return info

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.aec._reset_plan(options, warn=False)  # bad options raise here, before the generators move
        super().reset(seed=seed)
        rng = self.np_random
        options = dict(options or {})
        aec_seed = int(rng.integers(2**31)) if seed is not None else None
        self._skipped = 0
        first = True
        while True:
            if self.fixed_seat is None:
                self.seat = int(rng.integers(3))
            for _i, opp in enumerate(self.opponents):
                reset = getattr(opp, "reset", None)
                if reset is not None:
                    s = int(rng.integers(2**31))
                    try:
                        reset(seed=s)
                    except TypeError:
                        reset()
            self.aec.reset(seed=aec_seed if first else None, options=options or None)
            self._play_opponents()
            if not self.aec.game.is_over:
                break
            # the learning seat never had a decision in this hand: not an episode, deal again
            if "deal" in options:
                raise ValueError(f"the given deal gives seat {self.seat} no decision (the hand ended without it); "
                                 "nothing to redeal with a fixed deal")
            self._skipped += 1
            if self._skipped >= MAX_SKIPPED_HANDS:
                raise RuntimeError(f"{self._skipped} hands in a row without a decision for seat {self.seat}")
            first = False
        self._done = False
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self._done:
            raise RuntimeError("step() after the hand ended: call reset()")
        a = as_action_id(action)  # as raw_env.step: TypeError for 24640.9 or [24640, 5], never truncated
        g = self.aec.game
        illegal = not (0 <= a < NUM_ACTIONS) or not g.is_legal(a)
        if illegal:
            if self.on_illegal == "raise":
                raise ValueError(f"illegal action {a!r} for seat {self.seat} in phase {g.phase.name}: "
                                 f"{len(g.legal_actions())} legal actions (see action_masks())")
            a = g.default_action()
        self.aec.step(a)
        self._play_opponents()
        terminated = bool(self.aec.game.is_over)
        reward = float(self.aec.rewards[self.agent]) if terminated else 0.0
        self._done = terminated
        info = self._info()
        if self.on_illegal == "timeout":
            info["illegal"] = int(illegal)
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, False, info

    def render(self):
        """The table as text (``"ansi"``; ``"human"`` prints it) or as a picture (``"rgb_array"``: an ``(H, W, 3)``
        ``uint8`` array, `ddz_env.render.render_game`, every hand face up; the learning seat at the bottom)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode: pass render_mode='ansi', 'human' or "
                                  "'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            from ddz_env.render import render_game

            names = ["learning seat" if s == self.seat else "opponent" for s in range(3)]
            return render_game(self.aec.game, names, me=self.seat)
        if self.aec.game is None:
            text = "(no hand: call reset())"
        else:
            text = f"learning seat {self.seat}\n" + self.aec.game.render(spectator=self.aec.spectator)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.aec.close()


__all__ = ["DouDizhuSeatEnv", "register_gymnasium", "SEAT_ENV_ID", "MAX_SKIPPED_HANDS"]
