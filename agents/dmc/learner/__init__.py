"""DMC's learner, a floor above evaluation (it evaluates while it trains): the actors' experience
(:mod:`.experience`), where it comes from (:mod:`.sources`: in process or Ray actors), the training loop
(:mod:`.trainer`), its log and curves (:mod:`.runlog`) and the evaluation it runs as it goes
(:mod:`.periodic_eval`). The agent kind itself (model, checkpoint, agent, config) is ``agents.dmc``.
"""
