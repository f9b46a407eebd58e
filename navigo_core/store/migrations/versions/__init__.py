"""Alembic revisions of the store's schema, oldest first (``0001_baseline``, then one file per change).

Alembic loads them by path; this file only makes the folder a package so it ships with ``navigo_core``.
"""
