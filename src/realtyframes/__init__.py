"""realtyframes: a real-estate platform's REST API as validated pandas DataFrames cached as Parquet."""

from realtyframes._version import __version__

__all__ = ["__version__"]
