"""Batched membership oracle with a prefix trie of cached network states (issue 4).

    oracle = MembershipOracle(acceptor)          # any Acceptor: RNN, compiled net, DFA
    oracle.query(words) -> bool array            # accept_logit > 0, batched
    oracle.query_table(prefixes, suffixes)       # every p·s at once (an L* table fill)
    oracle.states(words) -> Tensor               # final network states
    oracle.stats                                 # queries, distinct words, steps, cache hits
"""

from rnn2dfa.oracle.trie import DEFAULT_CACHE_BYTES, MembershipOracle, OracleStats, pac_sample_size

__all__ = ["DEFAULT_CACHE_BYTES", "MembershipOracle", "OracleStats", "pac_sample_size"]
