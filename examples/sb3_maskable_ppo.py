"""Stable-Baselines3 / sb3-contrib: MaskablePPO with the move-scoring policy on one seat of Dou Dizhu.

    pip install -e ".[marl]"        # or: pip install sb3-contrib
    python examples/sb3_maskable_ppo.py [--steps 20000] [--opponents random,rule] [--init pretrained]

``MaskablePPO(MoveScoringSB3Policy, env)``: the policy scores each legal move from its own features
(``agents.integrations.move_policy``), and MaskablePPO reads the legal set from the seat env's
``action_masks()`` by itself. The learning seat is drawn per hand; the two other seats are played
by ``--opponents`` (one agent spec, or several separated by commas: one per env in turn).
The learning seat's score per hand is measured before and after training against ``rule`` and
``random`` on the same seeded duplicate deals (``agents.evaluation.protocols.evaluate``); the
trained policy is saved in the one export format and seated again with ``agents.load``, and the
SB3 zip itself as ``sb3:ZIP``. For a time budget with checkpoints and resume, see
``agents.integrations.sb3.policy.train``.
"""
from __future__ import annotations

import argparse
import os


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8192, help="training timesteps (learning-seat decisions)")
    p.add_argument("--opponents", default="random,rule", help="agents.load spec(s) for the other seats, comma-separated")
    p.add_argument("--init", default=None, help="start from a DMC checkpoint ('pretrained'); default: from scratch")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate (default 3e-4; 3e-5 with --init: its logits are Q / 0.05)")
    p.add_argument("--envs", type=int, default=8, help="seat envs stepped together (one batched policy call)")
    p.add_argument("--eval-deals", type=int, default=20, help="seeded deals (6 seatings each) before and after")
    p.add_argument("--out", default=os.path.join("runs", "sb3_maskable_ppo"), help="folder for policy.pt, model.zip")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest for these small nets)")
    args = p.parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import agents
    from agents.evaluation.protocols import evaluate
    from agents.integrations.move_policy import MoveScoringAgent
    from agents.integrations.sb3.policy import MoveScoringSB3Policy, export_policy
    from agents.integrations.seat_env import DouDizhuSeatEnv

    torch.set_num_threads(args.threads)
    opponents = args.opponents.split(",")

    def seat_env(opponent):  # scores reach tens: x 0.05 keeps a hand's return within about [-1, 1]
        return lambda: Monitor(DouDizhuSeatEnv(opponents=opponent, reward_scale=0.05))

    env = DummyVecEnv([seat_env(opponents[i % len(opponents)]) for i in range(args.envs)])
    policy_kwargs = {"init": args.init} if args.init else {"state_layers": [256], "head_layers": [128]}
    lr = args.lr if args.lr is not None else 3e-5 if args.init else 3e-4
    model = MaskablePPO(MoveScoringSB3Policy, env, n_steps=64, batch_size=128, n_epochs=4, learning_rate=lr,
                        gamma=1.0, ent_coef=0.01, policy_kwargs=policy_kwargs, seed=args.seed, device="cpu")

    def score(agent, baseline: str) -> float:
        """Mean score per hand of ``agent`` against ``baseline``, on the same seeded deals every time."""
        return evaluate(agent, baseline, deals=args.eval_deals, seed=12345)["A"]["mean_score"]

    def scores(agent) -> dict:
        return {b: score(agent, b) for b in ("rule", "random")}

    playing = MoveScoringAgent(model.policy.move_policy)  # the model's own scorer, greedy
    before = scores(playing)
    model.learn(total_timesteps=args.steps)
    after = scores(playing)
    print(f"MaskablePPO vs {args.opponents}: {model.num_timesteps} steps, {model._n_updates} gradient epochs")
    for b in ("rule", "random"):
        print(f"  mean score per hand vs {b:6s} over {args.eval_deals} deals x 6 seatings: "
              f"before {before[b]:+.3f}, after {after[b]:+.3f}")

    os.makedirs(args.out, exist_ok=True)
    policy_path = os.path.join(args.out, "policy.pt")
    zip_path = os.path.join(args.out, "model.zip")
    export_policy(model, policy_path, opponents=opponents)
    model.save(zip_path)
    seated = agents.load(policy_path)  # what evaluate.py --a PATH, the league and ddz-play load
    from_zip = agents.load(f"sb3:{zip_path}")  # the SB3 zip's policy.pth, read weights-only
    print(f"  agents.load({policy_path!r}) -> {seated}; agents.load('sb3:{zip_path}') -> {from_zip}")
    print(f"  seated again vs rule: {score(seated, 'rule'):+.3f} (as after training)")
    return {"model": model, "before": before, "after": after, "policy": policy_path, "zip": zip_path,
            "agent": seated}


if __name__ == "__main__":
    main()
