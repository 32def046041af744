"""Exact extraction for networks with finitely many, exactly representable states."""

from rnn2dfa.extract.exact.extractor import check_exact, extract_exact
from rnn2dfa.extract.exact.search import StateExplosionError, explore_table

__all__ = ["StateExplosionError", "check_exact", "explore_table", "extract_exact"]
