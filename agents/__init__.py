"""Agents for ddz-env, their evaluation, the tables people play at, and the programs.

The package, by role, lowest first (a module imports only from its own role or those before it in
this list; ``tests/project/test_layers.py`` checks it, and that no import closes a circle):

* ``base`` (the agent interface), then ``loader`` (an agent from a spec: ``agents.load``);
* ``runs/`` (what any trainer needs around its algorithm: configs from a dataclass, the run folder
  and its checkpoint, logging through the progress bar), ``baselines/`` (random, rule and its planner);
* ``dmc/`` (the DouZero-style Deep Monte-Carlo agent), ``douzero/`` (DouZero's own networks as agents)
  and ``search/`` (``search:BASE``: rollouts from deals the seat cannot rule out, and belief weights);
* ``evaluation/`` (the arena, duplicate and fixed-landlord, statistics, the league), ``integrations/``
  (the single-seat Gymnasium env, the move-scoring policy and the MARL libraries' adapters);
* DMC's learner (``dmc/learner/``: ``experience``, ``sources``, ``trainer``, ``periodic_eval``, ``runlog``: it
  evaluates while it trains);
* ``play/`` (one hand between people and agents; terminal and web);
* ``cli/`` (the programs: ``ddz-train``, ``ddz-evaluate``, ``ddz-compare``, calibration).

Names exported here (each imported on first use):

* :class:`Agent`: the interface, ``act_batch(decisions) -> action ids`` over :class:`Decisions`
  (what the seats on turn are given) and ``act(observation) -> action id``; :class:`BatchAgent`
  is the base class that derives ``act`` from ``act_batch``;
* :class:`RandomAgent`: uniform over legal actions, seeded;
* :class:`RuleAgent`: a deterministic heuristic player (hand decomposition, see ``baselines/planner.py``);
* :func:`load`: an agent by name (``"random"``, ``"rule"``) or from a checkpoint path;
  :func:`register` plugs in new kinds;
* :func:`evaluate`: duplicate or fixed-landlord matches (``evaluate.py`` is the CLI);
* :class:`DouDizhuSeatEnv`: one seat as a single-agent Gymnasium env, agents at the other two
  (importing ``agents`` registers ``gymnasium.make("ddz/DouDizhuSeat-v0")``).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from ._exports import lazy

# the names below are imported on first use (``agents.load`` does not import the evaluator, the
# baselines or Gymnasium's seat env: measured with ``python -X importtime -c "import agents"``, the
# eager imports took about 0.13 s over the 0.33 s of ddz_env's tables)
__getattr__, __dir__ = lazy(__name__, {
    "Agent": ".base", "BatchAgent": ".base", "Decisions": ".base", "as_batch_agent": ".base",
    "RandomAgent": ".baselines.random_agent", "RuleAgent": ".baselines.rule_agent",
    "AgentError": ".evaluation.arena", "evaluate": ".evaluation.protocols",
    "DouDizhuSeatEnv": ".integrations.seat_env", "SEAT_ENV_ID": ".integrations",
    "register_gymnasium": ".integrations",
    "load": ".loader", "read_checkpoint": ".loader", "register": ".loader", "register_lazy": ".loader",
    "registered": ".loader", "save_checkpoint": ".loader",
})


def _register_seat_env() -> None:
    """``gymnasium.make("ddz/DouDizhuSeat-v0")`` works once ``agents`` is imported (the one registration,
    ``integrations.register_gymnasium``: light, it loads the seat env only when an env is made)."""
    from .integrations import register_gymnasium

    register_gymnasium()


_register_seat_env()

#: modules that moved when the package was laid out by role, from the paths they had in release 0.1.0:
#: the old path still imports (the same module object, with a DeprecationWarning that names the new one)
#: until its removal in 0.3.0 (CHANGELOG.md). Modules that came after 0.1.0 have no old path here.
MOVED = {
    "agents.random_agent": "agents.baselines.random_agent",
    "agents.rule_agent": "agents.baselines.rule_agent",
    "agents.hand": "agents.baselines.planner",
    "agents.view": "agents.baselines.features",
    "agents.calibrate": "agents.cli.calibrate",
    "agents.arena": "agents.evaluation.arena",
    "agents.stats": "agents.evaluation.stats",
    "agents.match": "agents.play.match",
    "agents.web": "agents.play.web",
    "agents.web.server": "agents.play.web.server",
    "agents.dmc.evaluator": "agents.dmc.learner.periodic_eval",
    "agents.dmc.experience": "agents.dmc.learner.experience",
    "agents.dmc.trainer": "agents.dmc.learner.trainer",
}
# (agents.evaluation and agents.play are packages now; they export the former modules' names)


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Imports an old path of :data:`MOVED` as the module at its new path; ``python -m OLD`` runs the new
    one (``get_code``, and a package's ``__main__`` found through the new package's path)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        real = importlib.util.find_spec(MOVED[fullname])
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=real is not None and real.submodule_search_locations is not None)

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}: import it from there (the old path goes in the "
                      f"next release)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(MOVED[spec.name])
        self._spec = module.__spec__  # (the import system sets __spec__ to the alias's; put the real one back)
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec

    def is_package(self, fullname):
        real = importlib.util.find_spec(MOVED[fullname])
        return real is not None and real.submodule_search_locations is not None

    def get_code(self, fullname):
        """``python -m OLD``: code that runs the new module as ``__main__`` under its own name (so that its
        relative imports resolve), after a warning naming it."""
        return compile(self.get_source(fullname), f"<moved module {fullname}>", "exec")

    def get_source(self, fullname):
        new = MOVED[fullname]
        return (f"import runpy, sys\nsys.stderr.write('note: {fullname} moved to {new}: run python -m {new} (the old "
                f"path goes in the next release)\\n')\nrunpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n")


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())

__all__ = ["Agent", "BatchAgent", "Decisions", "AgentError", "as_batch_agent", "RandomAgent", "RuleAgent", "load",
           "register", "register_lazy", "registered", "read_checkpoint", "save_checkpoint", "evaluate",
           "DouDizhuSeatEnv", "SEAT_ENV_ID", "register_gymnasium"]
