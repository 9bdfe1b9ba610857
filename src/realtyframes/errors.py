"""Every exception realtyframes raises, in one module.

Class tree::

    RealtyFramesError                    base of everything below
    ├── QueryError(ValueError)           bad input found before any request (.param, .allowed)
    ├── ConfigError(ValueError)          the configuration: an unreadable config file, a bad key or
    │                                    value, credentials without a host (.param, .allowed)
    ├── OAuthError                       OAuth flow: state mismatch, consent denied, no callback,
    │                                    token file readable by others
    ├── ApiError                         the service answered 4xx/5xx (.status .code .message
    │   │                                .request_id .body .retry_after)
    │   ├── BadRequestError              400 bad_request
    │   ├── InvalidTokenError            401 invalid_token
    │   ├── InsufficientScopeError       403 insufficient_scope
    │   ├── NotFoundError                404 not_found
    │   ├── RateLimitError               429 rate_limit_exceeded (.retry_after)
    │   └── ServerError                  5xx server_error, also 502/503/504 and non-JSON error pages
    ├── TransportError                   no usable HTTP answer
    │   ├── ConnectError                 could not connect, or the connection dropped
    │   ├── RequestTimeoutError          timed out (also a builtin TimeoutError)
    │   └── BadResponseError             a 2xx whose body is not the JSON promised (truncated, HTML)
    │       └── ResponseMismatchError    a 2xx that answers another request: echoed offset / limit,
    │                                    a detail's id, foreign change records (.field .asked .got)
    ├── SchemaValidationError(ValueError)  rows failed validation with on_invalid="raise"
    │                                    (.model, .failure_cases)
    ├── CacheLockTimeout(TimeoutError)   another process held a cache entry's lock too long
    │   ├── CacheReadTimeout             (no longer raised: readers never wait)
    │   └── ScopeBusyError               another run of the same scope kept syncing past the wait,
    │                                    or a cache clear found a scope being synced
    ├── CacheLockError(OSError)          a cache lock's path cannot be a lock file (a directory ...)
    ├── NotificationError                a notification was not delivered (.targets, masked)
    │   └── NotificationTimeout(TimeoutError)  a target took longer than the notification deadline
    └── AnalysisInputError(ValueError)   bad argument or frame given to an analysis function
        ├── MissingColumnsError(KeyError)  a needed column is absent (.missing names them)
        └── ColumnTypeError              values cannot be read as numbers / timestamps

Warnings::

    ApiDeprecationWarning(DeprecationWarning)  a deprecated operation answered (sunset, link)
    DataQualityWarning(UserWarning)            rows were quarantined (count and checks)
    ├── SchemaDriftWarning                     a column arrived with another type than the schema's
    ├── DriftWarning                           the data moved while paged; records are missing
    └── RunAnomalyWarning                      a run's rows fell, or its quarantine rose, against
                                               the previous run of its scope (client.runs())
    CacheWarning(UserWarning)                  an unreadable cache file was moved aside (a miss)

>>> try:
...     raise NotFoundError("Resource not found", status=404, code="not_found")
... except ApiError as exc:
...     (exc.status, exc.code)
(404, 'not_found')
"""

from __future__ import annotations

import builtins
from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "AnalysisInputError",
    "ApiDeprecationWarning",
    "ApiError",
    "BadRequestError",
    "BadResponseError",
    "CacheLockError",
    "CacheLockTimeout",
    "CacheReadTimeout",
    "CacheWarning",
    "ColumnTypeError",
    "ConfigError",
    "ConnectError",
    "DataQualityWarning",
    "DriftWarning",
    "InsufficientScopeError",
    "InvalidTokenError",
    "MissingColumnsError",
    "NotFoundError",
    "NotificationError",
    "NotificationTimeout",
    "OAuthError",
    "QueryError",
    "RateLimitError",
    "RealtyFramesError",
    "RequestTimeoutError",
    "ResponseMismatchError",
    "RunAnomalyWarning",
    "SchemaDriftWarning",
    "SchemaValidationError",
    "ScopeBusyError",
    "ServerError",
    "TransportError",
]


class RealtyFramesError(Exception):
    """Base class of every realtyframes exception."""


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return cls(*args, **kwargs)


def _rebuilt(error: BaseException, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """What ``__reduce__`` returns for ``error``: its class called again with its keyword-only
    arguments (pickled across processes: the report's chart workers, the MCP server)."""
    return (_rebuild, (type(error), args, kwargs))


class _ParameterError(RealtyFramesError, ValueError):
    """Bad input naming its parameter: the base of :class:`QueryError` and :class:`ConfigError`.

    ``param`` names the offending parameter, ``allowed`` says what is accepted (text).
    ``values``: the accepted values themselves when ``allowed`` was given as an enumeration
    (a list or tuple: ``("Active", "Pending")``, ``(True, False)``), else None; for programs
    (the command line's help) that need the values, not the sentence. ``brief``: the message
    leaves ``allowed`` out (a misspelt name: the suggestion says it, the list is long).
    """

    def __init__(
        self,
        param: str,
        problem: str,
        allowed: str | Iterable[Any] | None = None,
        *,
        brief: bool = False,
    ) -> None:
        values = None if allowed is None or isinstance(allowed, str) else tuple(allowed)
        allowed_text = (
            allowed
            if allowed is None or isinstance(allowed, str)
            else ", ".join(map(str, values or ()))
        )
        text = f"{param}: {problem}"
        if allowed_text and not brief:
            text += f"; allowed: {allowed_text}"
        super().__init__(text)
        self.param = param
        self.problem = problem
        self.allowed = allowed_text
        self.values: tuple[Any, ...] | None = values
        self.brief = brief

    def __reduce__(self) -> tuple[Any, ...]:
        allowed = self.values if self.values is not None else self.allowed
        return _rebuilt(self, self.param, self.problem, allowed, brief=self.brief)


class QueryError(_ParameterError):
    """Bad input, found before any request was sent.

    >>> str(QueryError("Status", "unknown value 'Sold'", ["Active", "Pending"]))
    "Status: unknown value 'Sold'; allowed: Active, Pending"
    """


class ConfigError(_ParameterError):
    """The configuration is unusable: the config file cannot be read or holds an unknown key or a
    bad value, or credentials were given without the host they are for. Not a
    :class:`QueryError`: nothing about the call itself was wrong.

    >>> str(ConfigError("config file c.toml: tokn", "unknown key", ["token"]))
    'config file c.toml: tokn: unknown key; allowed: token'
    """


class OAuthError(RealtyFramesError):
    """The OAuth flow could not complete (state mismatch, denied consent, no callback in time).

    >>> OAuthError("state mismatch").reason
    'state mismatch'
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ApiError(RealtyFramesError):
    """The service answered with an error status.

    Attributes: ``status`` (HTTP status), ``code`` (the spec's machine code, e.g. ``not_found``),
    ``message`` (human text), ``request_id`` (if the server sent one), ``body`` (the parsed body, or
    a short excerpt of a non-JSON one), ``retry_after`` (seconds, when the server asked to wait),
    ``method`` and ``url`` (the request, secrets masked).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        request_id: str | None = None,
        body: Any = None,
        retry_after: float | None = None,
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.body = body
        self.retry_after = retry_after
        self.method = method
        self.url = url
        super().__init__(self._text())

    def _text(self) -> str:
        text = f"{self.status} {self.code}: {self.message}"
        extra = []
        if self.method and self.url:
            extra.append(f"{self.method} {self.url}")
        if self.request_id:
            extra.append(f"request id {self.request_id}")
        if self.retry_after is not None:
            extra.append(f"retry after {self.retry_after:g} s")
        if extra:
            text += f" ({'; '.join(extra)})"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        named = ("status", "code", "request_id", "body", "retry_after", "method", "url")
        return _rebuilt(self, self.message, **{name: getattr(self, name) for name in named})


class BadRequestError(ApiError):
    """400 ``bad_request``: invalid or missing parameters."""


class InvalidTokenError(ApiError):
    """401 ``invalid_token``: the token or key is invalid, expired or missing."""


class InsufficientScopeError(ApiError):
    """403 ``insufficient_scope``: the credential lacks the operation's OAuth scope."""


class NotFoundError(ApiError):
    """404 ``not_found``: the resource does not exist."""


class RateLimitError(ApiError):
    """429 ``rate_limit_exceeded``: the quota is used up; ``retry_after`` says for how long."""


class ServerError(ApiError):
    """5xx: internal failure, bad gateway, unavailable, gateway timeout, or a non-JSON error page."""


class TransportError(RealtyFramesError):
    """No usable HTTP answer: connection failed or dropped, timeout, or a broken body.

    ``method`` and ``url`` name the request (secrets masked).
    """

    def __init__(self, message: str, *, method: str | None = None, url: str | None = None) -> None:
        self.message = message
        self.method = method
        self.url = url
        text = f"{message} ({method} {url})" if method and url else message
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt(self, self.message, method=self.method, url=self.url)


class ConnectError(TransportError):
    """Could not connect to the host, or the connection dropped before the answer was complete."""


class RequestTimeoutError(TransportError, builtins.TimeoutError):
    """The request timed out (connect, read, write or pool); also catchable as ``TimeoutError``."""


class BadResponseError(TransportError):
    """A success status whose body is not valid JSON (truncated, an HTML page, empty)."""


class ResponseMismatchError(BadResponseError):
    """A success whose body answers another request than the one sent: a page whose echoed
    ``offset`` / ``limit`` differ from the request's, a detail whose id is not the one asked for,
    change records of ListingIds that were not asked about, a search page none of whose records
    has the asked ``Status`` / ``PropertyType``, analytics of another period. Typically a caching
    proxy answering from its cache. Retried like a broken body; raised when the retries are
    spent, and never stored in the cache.

    ``field`` names what mismatched (``offset``, ``limit``, ``ListingId``, ``id``, ``contactId``,
    ``period``, ``StandardStatus``, ``PropertyType``), ``asked`` what the request said and
    ``got`` what the answer said.

    >>> err = ResponseMismatchError.of("offset", 100, 50)
    >>> err.field, err.asked, err.got
    ('offset', 100, 50)
    >>> str(err)
    'the answer does not match the request: offset 50 where 100 was asked'
    """

    def __init__(
        self,
        message: str,
        *,
        field: str,
        asked: Any = None,
        got: Any = None,
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        self.field, self.asked, self.got = field, asked, got
        super().__init__(message, method=method, url=url)

    @classmethod
    def of(cls, field: str, asked: Any, got: Any, *, detail: str = "") -> ResponseMismatchError:
        """The error for ``field``: ``got`` in the answer where ``asked`` was requested."""
        text = f"the answer does not match the request: {field} {got!r} where {asked!r} was asked"
        if not isinstance(asked, str) and not isinstance(got, str):
            text = f"the answer does not match the request: {field} {got} where {asked} was asked"
        return cls(text + (f" ({detail})" if detail else ""), field=field, asked=asked, got=got)

    def at(self, method: str, url: str, message: str | None = None) -> ResponseMismatchError:
        """A copy naming the request (``method``, ``url``, secrets already masked), with
        ``message`` instead of its own when given (masked)."""
        text = self.message if message is None else message
        return type(self)(
            text, field=self.field, asked=self.asked, got=self.got, method=method, url=url
        )

    def __reduce__(self) -> tuple[Any, ...]:
        named = ("field", "asked", "got", "method", "url")
        return _rebuilt(self, self.message, **{name: getattr(self, name) for name in named})


class ApiDeprecationWarning(DeprecationWarning):
    """An operation answered with ``Deprecation``; the message names the sunset date and link."""


# --- data layers ---------------------------------------------------------------------------------


class DataQualityWarning(UserWarning):
    """Rows failed validation (the message gives the count and the checks)."""


class DriftWarning(DataQualityWarning):
    """The data moved while it was paged and the gap could not be closed (records missing)."""


class RunAnomalyWarning(DataQualityWarning):
    """A load, sync or report returned far fewer rows than the previous run of its scope, or
    quarantined a much larger share (thresholds: ``docs/cache.md``, "The run history"); the
    run's record says why in its ``anomaly`` column."""


class SchemaDriftWarning(DataQualityWarning):
    """A column arrived with values of another type than the schema's (the message names it)."""


class SchemaValidationError(RealtyFramesError, ValueError):
    """Rows failed validation and ``on_invalid="raise"`` was asked.

    ``failure_cases`` is a DataFrame with columns ``column``, ``check``, ``failure_case`` and
    ``index`` (the row label in the validated frame), one row per failure; ``model`` names the
    schema.

    >>> validate(bad, Listing, on_invalid="raise")  # doctest: +SKIP
    Traceback (most recent call last):
    SchemaValidationError: Listing: 2 of 10 rows invalid: ListPrice: greater_than_or_equal_to(0) (2)
    """

    def __init__(self, message: str, *, model: str, failure_cases: pd.DataFrame) -> None:
        super().__init__(message)
        self.model = model
        self.failure_cases = failure_cases

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt(self, str(self), model=self.model, failure_cases=self.failure_cases)


class CacheLockTimeout(RealtyFramesError, TimeoutError):
    """Another process held a cache entry's write lock for longer than the timeout."""


class CacheLockError(RealtyFramesError, OSError):
    """A cache lock cannot be taken because of what is at its path: a directory, a file in place
    of its folder, no permission. The message names the path; nothing was written."""


class CacheReadTimeout(CacheLockTimeout):
    """Kept for ``except`` clauses written for it: no longer raised (since #33 a reader reads the
    generation the cache's state database names and never waits for a writer)."""


class ScopeBusyError(CacheLockTimeout):
    """Another sync of the same scope (a ``sync_listings``, report or watch run, in another
    process or thread) kept its lock longer than this one would wait (``wait=``, ``--wait``);
    this one synced nothing, and nothing was synced twice (``docs/sync.md``). Also raised by
    ``ParquetCache.clear`` (``realtyframes cache clear``) for a scope being synced: it removed
    nothing."""


class NotificationError(RealtyFramesError):
    """A notification was not delivered to some of its targets; ``targets`` names them with their
    secrets masked (a URL's password, tokens and query values never appear)."""

    def __init__(self, message: str, targets: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.targets = tuple(targets)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.targets))


class NotificationTimeout(NotificationError, builtins.TimeoutError):
    """A target did not take a notification within its total deadline (a receiver that answers
    a byte at a time, say): the sending is abandoned and the target counted as not delivered.
    ``deadline``: the seconds allowed (``docs/scheduling.md``)."""

    def __init__(self, message: str, targets: Sequence[str] = (), deadline: float = 0.0) -> None:
        super().__init__(message, targets)
        self.deadline = deadline

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.targets, self.deadline))


class CacheWarning(UserWarning):
    """A cache file could not be read and was moved aside (the entry is then a miss)."""


class AnalysisInputError(RealtyFramesError, ValueError):
    """Bad input to an analysis function: an argument value or the frame given. Its message names
    the argument at fault first, in backticks; ``param`` is that name (None when none is named).

    >>> AnalysisInputError("market_trends(): `freq` must be one of 'W', 'M'").param
    'freq'
    """

    @property
    def param(self) -> str | None:
        """The argument at fault, as the message names it."""
        import re

        named = re.search(r"`(\w+)`", str(self.args[0]) if self.args else "")
        return None if named is None else named.group(1)


class MissingColumnsError(AnalysisInputError, KeyError):
    """A frame lacks columns an analysis function needs.

    ``missing`` holds the absent names, ``frame`` the argument's name, ``func`` the function.

    >>> import pandas as pd
    >>> from realtyframes.analysis._common import check_columns
    >>> check_columns(pd.DataFrame({"City": []}), ["City", "ListPrice"], "listings", "f")
    Traceback (most recent call last):
    ...
    realtyframes.errors.MissingColumnsError: f(): `listings` lacks required column 'ListPrice' ...
    """

    def __init__(
        self, missing: Sequence[str], *, frame: str, func: str, available: Iterable[Hashable] = ()
    ) -> None:
        self.missing = tuple(missing)
        self.frame = frame
        self.func = func
        have = [str(c) for c in available]
        shown = ", ".join(repr(c) for c in have[:30]) + (", ..." if len(have) > 30 else "")
        noun = "column" if len(self.missing) == 1 else "columns"
        names = ", ".join(repr(m) for m in self.missing)
        self.message = (
            f"{func}(): `{frame}` lacks required {noun} {names} (it has: {shown or 'no columns'})"
        )
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class ColumnTypeError(AnalysisInputError):
    """A column's values cannot be read as the numbers or timestamps a function needs."""
