"""Community detection front ends, as networkx.algorithms.community."""
