"""The local web page (``python -m agents.web``): play against agents, watch them, step through hand records.

Needs the ``web`` extra (FastAPI, uvicorn). See :mod:`agents.web.server`.
"""
