"""State-clustering extraction: k-means over prefix states, and interval partitions."""

from rnn2dfa.extract.kmeans.cluster import extract_kmeans
from rnn2dfa.extract.kmeans.partition import extract_partition

__all__ = ["extract_kmeans", "extract_partition"]
