"""Start-up of the command line: ``realtyframes --help`` against ``python -c "import pandas"``.

Goal (issue 13): ``realtyframes --help`` answers in under a second, because pandas, pyarrow,
pandera and matplotlib are imported only by the commands that use them. Baselines measured in the
same run, each a fresh interpreter: ``python -c "pass"`` (the interpreter alone) and
``python -c "import pandas"``. Median of 7 runs each.
Command: ``.venv/bin/python benchmarks/run_all.py cli``
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from _util import table, timed

REPEAT = 7
BIN = Path(sys.executable).parent
COMMANDS: dict[str, list[str]] = {
    'python -c "pass"': [sys.executable, "-c", "pass"],
    'python -c "import pandas"': [sys.executable, "-c", "import pandas"],
    'python -c "import realtyframes"': [sys.executable, "-c", "import realtyframes"],
    "realtyframes --help": [str(BIN / "realtyframes"), "--help"],
    "realtyframes fetch listings --help": [
        str(BIN / "realtyframes"),
        "fetch",
        "listings",
        "--help",
    ],
    "realtyframes report market --help": [str(BIN / "realtyframes"), "report", "market", "--help"],
}


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True)


def run() -> str:
    medians: dict[str, float] = {}
    for label, argv in COMMANDS.items():
        _run(argv)  # warm the file cache
        medians[label] = statistics.median(timed(lambda argv=argv: _run(argv), REPEAT))
    pandas = medians['python -c "import pandas"']
    rows = [
        [f"`{label}`", f"{seconds * 1000:.0f} ms", f"{seconds / pandas:.2f}×"]
        for label, seconds in medians.items()
    ]
    help_ = medians["realtyframes --help"]
    verdict = "meets" if help_ < 1.0 else "**misses**"
    return "\n".join(
        [
            "## Command-line start-up",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py cli`. Each command in a fresh "
            f'process, median of {REPEAT}; baseline `python -c "import pandas"` in the same run.',
            "",
            table(["command", "median", "vs import pandas"], rows),
            "",
            f"`realtyframes --help` takes {help_ * 1000:.0f} ms ({help_ / pandas:.2f}× importing "
            f"pandas): it {verdict} the goal of under one second.",
        ]
    )
