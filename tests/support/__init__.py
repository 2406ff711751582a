"""What the test files share: reference computations (reference.py), inputs built
the same way in several files (inputs.py), the cases and runners that tests start
in child processes, and the paths below."""

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
TESTS = SUPPORT.parent
ROOT = TESTS.parent
