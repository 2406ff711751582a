import sys

from nx_gpumatch.cli import main

sys.exit(main())
