"""RLlib (ray 2.x, new API stack): PPO in self-play with the move-scoring policy as an RLModule.

    # ray pins an older gymnasium: give it its own venv (make setup-rllib; docs/marl.md, "RLlib")
    .venv-rllib/bin/python examples/rllib_ppo.py [--iterations 4 --batch 1024 --eval-deals 20]

RLlib's multi-agent idiom: ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` over the AEC env
(``agents.integrations.rllib.module.make_env``: each observation with its legal action ids), one module
``"shared"`` that ``policy_mapping_fn`` gives to all three seats (self-play: every seat's decisions train
it), ``MoveScoringRLModule`` (each legal move scored from its own features, as the DMC agent does; the
value from the same trunk). ``disable_env_checking=True``: RLlib's pre-check steps the env with an
*unmasked* sampled action, which this env (rightly) rejects.

Before and after training, the module's policy is exported (``policy.pt``: ``agents.load``,
``evaluate.py``, the league and ``ddz-play`` seat it, without ray) and played in duplicate against the
rule agent on the same seeded deals; the script prints both scores per hand.
"""
from __future__ import annotations

import argparse
import os
import tempfile

from agents.integrations.rllib.module import MODULE_ID, RLlibObs, build_config, export_policy, make_env

__all__ = ["RLlibObs", "make_env", "train", "main"]


def score(module, opponent: str, deals: int, seed: int = 10_000) -> float:
    """The module's policy against ``opponent``, duplicate, on ``deals`` seeded deals (via its export)."""
    from agents.evaluation.protocols import evaluate

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "policy.pt")
        export_policy(module, path)
        return float(evaluate(path, opponent, deals=deals, seed=seed)["A"]["mean_score"])


def train(iterations: int = 4, batch: int = 1024, seed: int = 0, env_creator=make_env, eval_deals: int = 0,
          opponent: str = "rule", learning_rate: float = 1e-3, verbose: bool = True) -> dict:
    import ray
    from ray.tune.registry import register_env

    register_env("ddz_rllib", env_creator)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        algo = build_config(batch=batch, minibatch=min(256, batch), seed=seed, learning_rate=learning_rate,
                            state_layers=(128,), head_layers=(64,)).build_algo()
        before = score(algo.get_module(MODULE_ID), opponent, eval_deals) if eval_deals else None
        results = []
        for it in range(iterations):
            r = algo.train()
            results.append(r)
            if verbose:
                runners = r.get("env_runners", {})
                print(f"iteration {it + 1}: {runners.get('num_env_steps_sampled_lifetime')} env steps, "
                      f"{runners.get('num_episodes_lifetime')} hands", flush=True)
        after = score(algo.get_module(MODULE_ID), opponent, eval_deals) if eval_deals else None
        learner = results[-1].get("learners", {}).get(MODULE_ID, {})
        algo.stop()
    finally:
        ray.shutdown()
    return {"results": results, "learner": learner, "before": before, "after": after}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=4)
    p.add_argument("--batch", type=int, default=1024, help="env steps (all seats) per training iteration")
    p.add_argument("--eval-deals", type=int, default=20, help="seeded deals (x6 hands, duplicate) before and after")
    p.add_argument("--opponent", default="rule", help="the agent it is scored against (an agents.load spec)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    out = train(args.iterations, args.batch, args.seed, eval_deals=args.eval_deals, opponent=args.opponent)
    line = (f"RLlib PPO, self-play (one MoveScoringRLModule for three seats): {len(out['results'])} iterations, "
            f"{out['learner'].get('num_module_steps_trained_lifetime')} decisions trained")
    if out["before"] is not None:
        line += (f"; vs {args.opponent} in duplicate on {args.eval_deals} seeded deals {out['before']:+.2f} -> "
                 f"{out['after']:+.2f} per hand")
    print(line)
    return out


if __name__ == "__main__":
    main()
