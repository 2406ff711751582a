"""``python -m nx_gpumatch.algorithms [--write]``: check (or rewrite)
``_nx_gpumatch/_info.py`` against the registrations of the dispatched functions."""

from nx_gpumatch.algorithms._registry import main

raise SystemExit(main())
