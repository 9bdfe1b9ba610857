"""The exception tree and the one function mapping a response to its exception.

Edge cases of the bodies are scripted here (the sandbox only produces well-formed ones); the
sandbox's own error answers are covered in test_auth_and_errors.py.
"""

from __future__ import annotations

import pickle

import httpx
import pytest

from realtyframes import errors
from realtyframes.api import error_from_response
from realtyframes.errors import (
    ApiError,
    BadRequestError,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    QueryError,
    RateLimitError,
    RealtyFramesError,
    ServerError,
)

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)

SPEC_CODES = [
    (400, "bad_request", BadRequestError),
    (401, "invalid_token", InvalidTokenError),
    (403, "insufficient_scope", InsufficientScopeError),
    (404, "not_found", NotFoundError),
    (429, "rate_limit_exceeded", RateLimitError),
    (500, "server_error", ServerError),
]


def test_class_tree() -> None:
    assert issubclass(QueryError, ValueError) and issubclass(QueryError, RealtyFramesError)
    for _, _, cls in SPEC_CODES:
        assert issubclass(cls, ApiError) and issubclass(cls, RealtyFramesError)
    for cls in (errors.ConnectError, errors.RequestTimeoutError, errors.BadResponseError):
        assert issubclass(cls, errors.TransportError)
        assert not issubclass(cls, ApiError)
    assert issubclass(errors.RequestTimeoutError, TimeoutError)
    assert issubclass(errors.ApiDeprecationWarning, DeprecationWarning)
    assert sorted(errors.__all__) == errors.__all__
    assert all(hasattr(errors, name) for name in errors.__all__)


@pytest.mark.parametrize(("status", "code", "cls"), SPEC_CODES)
def test_api_error_shape(status: int, code: str, cls: type[ApiError]) -> None:
    body = {"error": {"code": code, "message": f"message of {code}", "status": status}}
    exc = error_from_response(httpx.Response(status, json=body, headers={"X-Request-Id": "r-1"}))
    assert type(exc) is cls
    assert (exc.status, exc.code, exc.message, exc.request_id) == (
        status,
        code,
        f"message of {code}",
        "r-1",
    )
    assert exc.body == body
    assert str(exc).startswith(f"{status} {code}: message of {code}")


@pytest.mark.parametrize(("status", "code", "cls"), SPEC_CODES)
def test_problem_shape(status: int, code: str, cls: type[ApiError]) -> None:
    body = {
        "type": f"https://docs.example/#{code}",
        "title": code.replace("_", " "),
        "status": status,
        "detail": "the detail",
        "code": code,
    }
    response = httpx.Response(
        status, content=httpx.Response(200, json=body).content,
        headers={"Content-Type": "application/problem+json"},
    )  # fmt: skip
    exc = error_from_response(response)
    assert type(exc) is cls
    assert (exc.status, exc.code, exc.message) == (status, code, "the detail")


def test_problem_without_code_falls_back_to_type_then_title() -> None:
    by_type = error_from_response(
        httpx.Response(
            403, json={"type": "https://d/#insufficient_scope", "title": "x", "status": 403}
        )
    )
    assert (type(by_type), by_type.code, by_type.message) == (
        InsufficientScopeError,
        "insufficient_scope",
        "x",
    )
    by_title = error_from_response(httpx.Response(404, json={"title": "not found", "status": 404}))
    assert (type(by_title), by_title.code, by_title.message) == (
        NotFoundError,
        "not_found",
        "not found",
    )


def test_code_wins_over_status_and_unknown_codes_follow_status() -> None:
    exc = error_from_response(
        httpx.Response(400, json={"error": {"code": "not_found", "message": "m"}})
    )
    assert type(exc) is NotFoundError and exc.status == 400
    exc = error_from_response(
        httpx.Response(403, json={"error": {"code": "account_locked", "message": "m"}})
    )
    assert type(exc) is InsufficientScopeError and exc.code == "account_locked"
    exc = error_from_response(
        httpx.Response(418, json={"error": {"code": "teapot", "message": "m"}})
    )
    assert type(exc) is ApiError and exc.code == "teapot"
    exc = error_from_response(httpx.Response(414, text=""))
    assert type(exc) is ApiError and exc.code == "http_414"


@pytest.mark.parametrize(
    ("status", "name", "cls", "code"),
    [
        (401, "Unauthorized", InvalidTokenError, "invalid_token"),
        (404, "NotFoundError", NotFoundError, "not_found"),
        (500, "ServerError", ServerError, "server_error"),
        (429, "TooManyRequests", RateLimitError, "rate_limit_exceeded"),
    ],
)
def test_legacy_shape(status: int, name: str, cls: type[ApiError], code: str) -> None:
    body = {"error": name, "message": "legacy says no"}
    exc = error_from_response(httpx.Response(status, json=body))
    assert (type(exc), exc.code, exc.message, exc.body) == (cls, code, "legacy says no", body)


@pytest.mark.parametrize("status", [502, 503, 504])
def test_html_error_page_from_a_proxy(status: int) -> None:
    response = httpx.Response(
        status, text=NGINX_502.replace("502", str(status)), headers={"Content-Type": "text/html"}
    )
    exc = error_from_response(response, method="GET", url="http://h/v1/listings")
    assert type(exc) is ServerError
    assert (exc.status, exc.code) == (status, "server_error")
    assert exc.message.startswith(f"non-JSON {status} answer: {status} Bad Gateway")
    assert "<" not in exc.message and len(exc.message) < 260
    assert "GET http://h/v1/listings" in str(exc)


def test_non_json_bodies_are_excerpted_and_empty_bodies_named() -> None:
    long_text = "boom " * 500
    exc = error_from_response(httpx.Response(500, text=long_text))
    assert exc.message.startswith("non-JSON 500 answer: boom boom") and len(exc.message) < 260
    empty = error_from_response(httpx.Response(503, content=b""))
    assert type(empty) is ServerError and "Service Unavailable" in empty.message
    broken = error_from_response(httpx.Response(500, content=b'{"error": {"code": "server_err'))
    assert type(broken) is ServerError and broken.code == "server_error"


def test_other_json_shapes() -> None:
    exc = error_from_response(
        httpx.Response(400, json={"message": "plain message", "code": "bad_request"})
    )
    assert (type(exc), exc.message) == (BadRequestError, "plain message")
    exc = error_from_response(httpx.Response(400, json=["not", "an", "object"]))
    assert (type(exc), exc.code, exc.message) == (
        BadRequestError,
        "bad_request",
        "Invalid or missing parameters",
    )
    exc = error_from_response(
        httpx.Response(404, json={"error": {"code": 42, "message": None}, "request_id": "b-7"})
    )
    assert (type(exc), exc.code, exc.message, exc.request_id) == (
        NotFoundError,
        "not_found",
        "Resource not found",
        "b-7",
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7", 7.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("soon", None), ("", None)],
)
def test_retry_after_kept_on_the_error(value: str, expected: float | None) -> None:
    exc = error_from_response(httpx.Response(429, json={}, headers={"Retry-After": value}))
    assert type(exc) is RateLimitError and exc.retry_after == expected


def test_secrets_masked_in_message_body_and_url() -> None:
    secret = "sk-LEAKY-0123456789"
    body = {
        "error": {"code": "invalid_token", "message": f"token {secret} is unknown", "status": 401}
    }
    exc = error_from_response(
        httpx.Response(401, json=body),
        method="GET",
        url=f"http://h/api/me?api_key={secret}",
        secrets=[secret],
    )
    assert secret not in str(exc) and secret not in repr(exc) and secret not in repr(exc.body)
    assert "api_key=***" in str(exc)


def test_errors_pickle_round_trip() -> None:
    exc = error_from_response(
        httpx.Response(
            429,
            json={"error": {"code": "rate_limit_exceeded", "message": "m"}},
            headers={"Retry-After": "3"},
        )
    )
    again = pickle.loads(pickle.dumps(exc))
    assert (type(again), again.status, again.code, again.retry_after, str(again)) == (
        RateLimitError, 429, "rate_limit_exceeded", 3.0, str(exc)
    )  # fmt: skip
    query = pickle.loads(pickle.dumps(QueryError("City", "bad", ["A", "B"])))
    assert (query.param, query.allowed, str(query)) == ("City", "A, B", "City: bad; allowed: A, B")
    timeout = pickle.loads(pickle.dumps(errors.RequestTimeoutError("slow", method="GET", url="u")))
    assert (timeout.message, timeout.url) == ("slow", "u")


# -- error_for: every failure of a GET typed in one function ---------------------------------------
@pytest.mark.parametrize(
    ("failure", "cls", "status", "code"),
    [
        (
            httpx.Response(404, json={"error": {"code": "not_found"}}),
            "NotFoundError",
            404,
            "not_found",
        ),
        (httpx.Response(414), "ApiError", 414, "http_414"),
        (httpx.Response(503), "ServerError", 503, "server_error"),
        (httpx.ConnectError("refused sk-secret-9"), "ConnectError", None, None),
        (httpx.ReadTimeout("slow"), "RequestTimeoutError", None, None),
        (httpx.DecodingError("bad gzip"), "BadResponseError", None, None),
        (httpx.UnsupportedProtocol("ftp"), "TransportError", None, None),
    ],
)
def test_error_for_types_every_failure(
    failure: httpx.Response | Exception, cls: str, status: int | None, code: str | None
) -> None:
    from realtyframes.api._errors import error_for

    error = error_for(failure, url="/v1/listings?api_key=***", secrets=("sk-secret-9",))
    assert type(error).__name__ == cls and isinstance(error, errors.RealtyFramesError)
    assert getattr(error, "status", None) == status and getattr(error, "code", None) == code
    assert "sk-secret-9" not in str(error) and "sk-secret-9" not in repr(error)
    if status is None:
        assert isinstance(error, errors.TransportError)  # transport failures: their own branch


def test_error_for_bad_answers_and_a_passed_deadline() -> None:
    from realtyframes.api._body import BrokenBody
    from realtyframes.api._errors import error_for
    from realtyframes.api._transports import DeadlinePassed, TransientAnswer

    broken = error_for(TransientAnswer(BrokenBody("cut short"), 200), url="/v1/listings")
    assert isinstance(broken, errors.BadResponseError) and "broken body" in broken.message
    mismatch = errors.ResponseMismatchError("another page", field="offset", asked=50, got=0)
    other = error_for(TransientAnswer(mismatch, 200), url="/v1/listings")
    assert isinstance(other, errors.ResponseMismatchError)
    assert (other.field, other.asked, other.got, other.url) == ("offset", 50, 0, "/v1/listings")
    late = error_for(DeadlinePassed(), url="/v1/listings")
    assert isinstance(late, errors.RequestTimeoutError) and "deadline" in late.message
