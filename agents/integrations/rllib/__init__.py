"""RLlib through its public API: the move-scoring policy as an ``RLModule``, the batched tables as its vector env
and env runners, its checkpoints as agents, and the learner ``train.py --config rllib`` runs."""
