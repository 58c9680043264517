"""Versioned schema migrations of the audit tables, applied in order by :mod:`evigate.store.migrate`.

Each file is named ``NNNN_description.sql`` (numbered from 0001 without gaps) and holds plain DuckDB DDL. A
migration, once released, is never edited: a schema change is a new file.
"""
