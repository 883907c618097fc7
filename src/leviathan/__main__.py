"""``python -m leviathan`` (and ``torchrun -m leviathan``) entry point."""

import sys

from .cli import main

sys.exit(main())
