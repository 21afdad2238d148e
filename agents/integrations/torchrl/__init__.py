"""TorchRL through its public API: the self-play tables as an ``EnvBase``, the move-scoring policy as a
``ProbabilisticActor``, and the learner ``train.py --config torchrl`` runs (its Collector, GAE and ClipPPOLoss)."""
