"""Reproducible speed and quality measurements; each module prints a table."""
