"""``python -m bridge`` runs the ``wavebridge`` command."""
import sys

from bridge.ops.cli import main

sys.exit(main())
