"""Bipartite front ends, as networkx.algorithms.bipartite."""
