"""Community detection written once for every engine: the level loops of
Louvain and Leiden (:mod:`~nx_gpumatch.community.levels`), the sweep schedule
and tuning constants (:mod:`~nx_gpumatch.community.schedule`), the objectives
(:mod:`~nx_gpumatch.community.quality`) and the interface an engine offers
the level loops (:mod:`~nx_gpumatch.community.engine`).

Host code only (numpy and scipy): the CPU engine (``cpu/louvain``,
``cpu/leiden``) and the GPU engine (``gpu/louvain.py``, ``gpu/leiden.py``)
import it; it imports no engine module at import time.
"""
