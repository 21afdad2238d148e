"""DouZero-style Deep Monte-Carlo agent and trainer (``ddz-train``: ``agents.cli.train``;
the shipped configs: ``agents/dmc/configs/``)."""
from .agent import DMCAgent
from .config import TrainConfig, load_config
from .model import DMCModel
from .trainer import load_checkpoint, train

__all__ = ["DMCAgent", "DMCModel", "TrainConfig", "load_config", "load_checkpoint", "train"]
