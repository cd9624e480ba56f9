"""``python -m pypto_sim``: the pypto-sim command line."""
import sys

from .cli import main

sys.exit(main())
