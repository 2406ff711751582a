"""asv benchmarks of nx-gpumatch (public API only).

They time compiled kernels: without this setting, a small input of a family
not compiled yet would run its kernels interpreted (see the README, First use).
"""

import os

os.environ.setdefault("NX_GPUMATCH_INTERPRET_SMALL", "0")
