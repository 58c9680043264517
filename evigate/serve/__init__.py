"""``evigate serve``: the HTTP API for chat front ends (FastAPI + uvicorn) over a bounded pool of programs.

Importing this package is cheap; FastAPI is imported by :mod:`evigate.serve.app` only.
"""
