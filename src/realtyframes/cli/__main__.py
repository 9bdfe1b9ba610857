"""``python -m realtyframes.cli``: the same as the ``realtyframes`` command."""

from realtyframes.cli import main

raise SystemExit(main())
