"""Labelled fixture files shipped with evigate (data only)."""
