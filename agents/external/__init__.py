"""A seat for outside programs: ``ext:COMMAND`` (standard input and output) and ``http:URL`` (a POST a decision),
speaking the JSON protocol of `.message` (one message a decision, one reply naming a legal move)."""
from __future__ import annotations

from .._exports import lazy

_WHERE = {"ExternalAgent": ".agent", "ExternalError": ".agent", "from_spec": ".agent", "PROTOCOL": ".message",
          "ReplyError": ".message", "messages": ".message", "read_reply": ".message", "render": ".message"}
__getattr__, __dir__ = lazy(__name__, _WHERE)
__all__ = sorted(_WHERE)
