"""realtyframes: a real-estate platform's REST API as validated pandas DataFrames cached as Parquet.

>>> import realtyframes as rf
>>> client = rf.Client()            # no credentials: the embedded sandbox  # doctest: +SKIP
>>> client.me()["domain"]                                                     # doctest: +SKIP
'demo-realty.example'

One public surface: everything users call is re-exported here, each name written once:

- the exceptions and warnings are imported at once, every name of ``errors.__all__`` (touching
  ``rf.MissingColumnsError`` loads no data library);
- every other public name is one line of the ``TYPE_CHECKING`` block below, in the re-export form
  ``from realtyframes.analysis import seasonally_adjust as seasonally_adjust``: type checkers and
  editors read it there, and :func:`realtyframes._lazy.lazy_declared` reads the same lines to
  import the name on first use, so ``import realtyframes`` and ``realtyframes --help`` load
  neither pandas, pandera, httpx nor matplotlib. Adding a public name is adding its line;
- ``__all__`` is derived: the errors, ``__version__`` and the lazy names, sorted.
"""

from typing import TYPE_CHECKING

from realtyframes import errors as _errors
from realtyframes._lazy import lazy_declared
from realtyframes._version import __version__ as __version__
from realtyframes.errors import *  # noqa: F403  (every exception: errors.__all__)

if TYPE_CHECKING:  # the lazy public names, one line each: the only place they are declared
    from realtyframes import oauth as oauth
    from realtyframes import plots as plot  # noqa: F401  (rf.plot: the plots package)
    from realtyframes import sandbox as sandbox
    from realtyframes._client import Client as Client
    from realtyframes._client import ClientSettings as ClientSettings
    from realtyframes.analysis import LeadFunnel as LeadFunnel
    from realtyframes.analysis import TrafficSummary as TrafficSummary
    from realtyframes.analysis import compare_markets as compare_markets
    from realtyframes.analysis import comps as comps
    from realtyframes.analysis import lead_funnel as lead_funnel
    from realtyframes.analysis import market_changes as market_changes
    from realtyframes.analysis import market_summary as market_summary
    from realtyframes.analysis import market_trends as market_trends
    from realtyframes.analysis import price_drop_summary as price_drop_summary
    from realtyframes.analysis import price_drops as price_drops
    from realtyframes.analysis import price_index as price_index
    from realtyframes.analysis import seasonally_adjust as seasonally_adjust
    from realtyframes.analysis import traffic_summary as traffic_summary
    from realtyframes.api import RetryPolicy as RetryPolicy
    from realtyframes.loaders import LoadInfo as LoadInfo
    from realtyframes.loaders import Plan as Plan
    from realtyframes.schemas import Analytics as Analytics
    from realtyframes.watch import Watches as Watches
    from realtyframes.watch import WatchResult as WatchResult

__getattr__, __dir__ = lazy_declared(
    __name__, __file__, globals(), [*_errors.__all__, "__version__"]
)
