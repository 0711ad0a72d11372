"""``python -m govlab``: the same as the ``govlab`` command."""

from govlab.cli import main

raise SystemExit(main())
