"""Tianshou through its public API: the seat tables as its vector env, the move-scoring actor and critic, its PPO,
and the learner ``train.py --config tianshou`` runs."""
