"""What any trainer needs around its algorithm, apart from it:

* :mod:`.config`: settings as a dataclass, read from YAML and ``--set``, shown by ``--help``,
  the shipped configs (top-level ``configs/``) found by name, the keys a resume cannot change;
* :mod:`.folder`: the run folder's name, its checkpoint written whole or not at all, the resume hint;
* :mod:`.log`: log lines through the progress bar, TensorBoard scalars where installed;
* :mod:`.weights`: a learner's weights shared with its actor processes (a sequence lock);
* :mod:`.algos`: the algorithm table (a config's ``algo`` -> the module that trains it) and a library
  learner's config.

It imports nothing of ``agents`` (an algorithm such as ``agents.dmc`` builds on it).
"""
