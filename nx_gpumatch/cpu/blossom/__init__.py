"""Exact maximum-weight matching in general graphs: Edmonds' weighted blossom
algorithm in its primal-dual form (duals y on vertices, z on blossoms; Galil's
1986 survey), with the search organised for large sparse graphs.

How the search is organised
---------------------------
* Every free vertex whose dual is positive is the root of its own alternating
  tree; all trees grow at once and share one dual change delta, as in the
  O(n^3) method. Trees persist across augmentations: an augmentation (or a root
  whose dual reaches zero) dissolves only the trees involved.
* Duals are lazy. With D the sum of all deltas so far, a vertex dual is
  ``y = Y[v] + A[name(v)] + s*D`` and a top-level blossom dual is
  ``z = Z[B] - 2*s*D``, s = -1 for S, +1 for T, 0 for unlabeled. All vertices of
  a top-level blossom share one name (a vertex id); relabeling a blossom is
  O(1). A new blossom takes over the name of its largest child, so only the
  vertices of the other children are renamed (and Y rebased).
* Events (a dual reaching zero, an edge becoming tight, a T-blossom dual
  reaching zero) come from one 4-ary heap with lazy deletion: a popped entry's
  time is recomputed from the state; early entries are pushed again and stale
  ones dropped. Each S-S edge gets its own entry; for an unlabeled vertex only
  its best edge to an S vertex is kept in the heap (B2), and the vertex is
  rescanned when that entry goes stale. Every change that can make an event
  earlier pushes it, so no event is missed.
* Warm start: y_v = half the heaviest incident weight; then vertices, heaviest
  first, lower their dual as far as feasibility allows and match along a tight
  edge to a free neighbour (a greedy matching on tight edges). Free vertices
  left with a positive dual become the roots; those with zero dual are final.
* ``maxcardinality``: every number is a pair (hi, lo) compared lexicographically
  and each edge weighs (1, w): the result is the maximum-weight matching for
  weights C + w with C "infinitely" large, i.e. the heaviest among the largest
  matchings. Without it hi stays 0.
* Weights are scaled by 4 and all root duals start even, so for integer weights
  every dual and event time stays an integer: float64 arithmetic is then exact
  (for weights up to about 2**48).

Blossoms are ids n..2n-1. Their children form a circular doubly linked list
(NEXT/PREV) starting at the child holding the base (BCHILD); EA/EB are the
endpoints of the edge from a child to the next one. The vertices of a blossom
are one contiguous run VFIRST..VLAST of the ``vnext`` chain, so forming and
expanding never copy vertex lists.

The package: :mod:`.tables` (the tables' columns and the :class:`.tables.Search`
bundle of arrays), :mod:`.events` (the heap and event times), :mod:`.structure`
(labels, trees, augmentation, blossoms), :mod:`.search` (warm start, event
loop, setup).
"""

from nx_gpumatch.cpu.blossom.search import max_weight_matching, stats

__all__ = ["max_weight_matching", "stats"]
