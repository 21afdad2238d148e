"""Stable-Baselines3 (sb3-contrib's MaskablePPO) through its public API: the move-scoring policy as an SB3 policy, its
rollout buffer over legal sets, the seat tables as a ``VecEnv``, and the learner ``train.py --config sb3`` runs."""
