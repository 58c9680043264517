"""Composer fixture cases, one YAML file per case (data only)."""
