"""The sandbox's OpenAPI document: valid OpenAPI 3.1, true to the spec, and true to the server.

schemathesis fuzzes the running sandbox from its own ``/openapi.json`` (every operation, positive
and negative data, both error representations), and hand-made requests reach what fuzzing cannot
(real ids and keys, the OAuth flow, protected mode, quota exhaustion): no answer may be a server
error or break the document (status, content type, headers, body).
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from realtyframes.sandbox import DEMO, _query
from realtyframes.sandbox._openapi import openapi_document

FORM = "application/x-www-form-urlencoded"

OPERATIONS = {
    ("get", "/"),
    ("get", "/v1"),
    ("get", "/authorize"),
    ("post", "/api/oauth/token"),
    ("get", "/v1/listings"),
    ("get", "/v1/listings/changes"),
    ("get", "/v1/listings/{ListingId}"),
    ("get", "/v1/analytics"),
    ("get", "/v1/contacts"),
    ("get", "/v1/contacts/{contactId}"),
    ("get", "/v1/contacts/{contactId}/activity"),
    ("get", "/v1/me"),
    ("get", "/api/me"),
    ("get", "/api/getContacts"),
    ("get", "/.well-known/oauth-authorization-server"),
    ("get", "/.well-known/oauth-protected-resource"),
    ("get", "/.well-known/oauth-protected-resource/mcp"),
}
RATE_HEADERS = {
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
}
LEGACY = {"/api/me", "/api/getContacts"}


def _operations(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m, p): op for p, item in doc["paths"].items() for m, op in item.items()}


def _resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _query_names(doc: dict[str, Any], operation: dict[str, Any]) -> set[str]:
    params = (_resolve(doc, p) for p in operation.get("parameters", []))
    return {p["name"] for p in params if p["in"] == "query"}


@pytest.mark.parametrize("protected", [True, False])
def test_document_is_valid_openapi_31(protected: bool) -> None:
    doc = openapi_document("http://127.0.0.1:8000", protected=protected)
    json.dumps(doc)  # plain JSON data
    OPENAPI_31_VALIDATOR.validate(doc)
    loaded = schemathesis.openapi.from_dict(doc)
    loaded.validate()
    assert {(op.ok().method, op.ok().path) for op in loaded.get_all_operations()} == OPERATIONS


def test_the_validator_is_not_vacuous() -> None:
    doc = openapi_document()
    doc["paths"]["/v1/listings"]["get"]["parameters"][1]["in"] = "body"  # not an OpenAPI location
    with pytest.raises(ValueError):
        OPENAPI_31_VALIDATOR.validate(doc)


def test_every_reference_resolves() -> None:
    doc = openapi_document()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                _resolve(doc, node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)


def test_every_operation_documents_errors_and_headers() -> None:
    doc = openapi_document()
    for (method, path), operation in _operations(doc).items():
        responses = operation["responses"]
        assert set(responses) == {"200", "400", "401", "403", "404", "429", "500"}, path
        for status, response in responses.items():
            headers = set(response["headers"])
            assert headers >= RATE_HEADERS, (path, status)
            assert ("Retry-After" in headers) == (status == "429"), (path, status)
            legacy = path in LEGACY
            assert legacy == (headers >= {"Deprecation", "Sunset", "Link"}), (path, status)
            if status == "200":
                continue
            content = set(response["content"])
            if legacy:
                assert content == {"application/json"}
                schema = response["content"]["application/json"]["schema"]
                assert schema["allOf"][0]["$ref"].endswith("/LegacyError")
            else:
                assert {"application/json", "application/problem+json"} <= content, (path, status)
        assert operation.get("deprecated", False) == (path in LEGACY), path
        assert operation["parameters"][0]["$ref"].endswith("/ServiceApiVersion"), (method, path)


def test_parameters_follow_the_spec() -> None:
    doc = openapi_document()
    ops = _operations(doc)
    search = {
        p["name"]: p for p in (_resolve(doc, p) for p in ops[("get", "/v1/listings")]["parameters"])
    }
    assert search["Limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 20,
    }
    assert search["Offset"]["schema"] == {"type": "integer", "minimum": 0, "default": 0}
    assert search["PropertyType"]["schema"]["default"] == "Residential"
    assert len(search["PropertyType"]["schema"]["enum"]) == 8
    assert search["Status"]["schema"]["enum"] == [
        "Active",
        "Pending",
        "Closed",
        "Active Under Contract",
    ]
    assert search["Sort"]["schema"]["enum"] == [
        "-listprice",
        "listprice",
        "-listdate",
        "beds",
        "baths",
    ]
    assert search["SeniorCommunity"]["schema"]["enum"] == ["true", "exclude"]
    assert search["Pool"]["schema"] == {"type": "boolean"}
    assert search["Subtypes"]["explode"] is False
    changes = {
        p["name"]: p
        for p in (_resolve(doc, p) for p in ops[("get", "/v1/listings/changes")]["parameters"])
    }
    assert changes["Since"]["required"] and changes["ListingIds"]["required"]
    assert changes["ListingIds"]["schema"]["maxItems"] == 100
    analytics = {
        p["name"]: p
        for p in (_resolve(doc, p) for p in ops[("get", "/v1/analytics")]["parameters"])
    }
    assert analytics["Period"]["schema"] == {
        "type": "string",
        "enum": ["24h", "7d", "30d", "90d", "1y"],
        "default": "30d",
    }
    assert analytics["Device"]["schema"]["enum"] == ["desktop", "mobile", "tablet"]
    token = ops[("post", "/api/oauth/token")]["requestBody"]["content"]
    assert set(token) == {"application/x-www-form-urlencoded"}
    assert ops[("get", "/api/getContacts")]["security"] == [{"apiKeyQuery": []}]
    schemes = doc["components"]["securitySchemes"]
    assert schemes["apiKeyHeader"] == {
        **schemes["apiKeyHeader"],
        "in": "header",
        "name": "X-API-Key",
    }
    assert schemes["apiKeyQuery"]["name"] == "api_key"


def test_documented_query_parameters_are_the_servers() -> None:
    """What the document declares is exactly what the app accepts (it refuses unknown names)."""
    doc = openapi_document()
    ops = _operations(doc)
    expected = {
        ("get", "/v1/listings"): _query.SEARCH_PARAMS,
        ("get", "/v1/listings/changes"): _query.CHANGES_PARAMS,
        ("get", "/v1/analytics"): _query.ANALYTICS_PARAMS,
        ("get", "/v1/contacts"): _query.CONTACTS_PARAMS,
        ("get", "/authorize"): _query.AUTHORIZE_PARAMS,
    }
    for key, names in expected.items():
        assert _query_names(doc, ops[key]) == set(names), key
    token_schema = ops[("post", "/api/oauth/token")]["requestBody"]["content"]
    form = token_schema["application/x-www-form-urlencoded"]["schema"]["properties"]
    assert set(form) == set(_query.TOKEN_PARAMS)


def test_protected_flag_only_changes_security() -> None:
    open_doc = openapi_document(protected=False)
    closed = openapi_document(protected=True)
    for key, operation in _operations(open_doc).items():
        other = _operations(closed)[key]
        assert {k: v for k, v in operation.items() if k != "security"} == {
            k: v for k, v in other.items() if k != "security"
        }
        if other.get("security"):  # anonymous access added in open mode, except the legacy host
            expected = other["security"] if key[1] in LEGACY else [{}, *other["security"]]
            assert operation["security"] == expected


@pytest.mark.parametrize("mode", ["open", "protected"])
def test_served_document(mode: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sandbox_url" if mode == "open" else "protected_sandbox_url")
    served = httpx.get(f"{url}/openapi.json", timeout=10)
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/json")
    assert served.json() == openapi_document(url, protected=mode == "protected")


# -- schemathesis against the running sandbox --------------------------------------------------
# (schemathesis.pytest.from_fixture needs a pytest private attribute that pytest 9 dropped, so each
# operation gets a plain Hypothesis test over the operation's schemathesis strategy.)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def served_schema(sandbox_url: str) -> Any:
    return schemathesis.openapi.from_url(f"{sandbox_url}/openapi.json")


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize(("method", "path"), sorted(OPERATIONS, key=lambda mp: (mp[1], mp[0])))
def test_sandbox_conforms_to_its_document(
    served_schema: Any, method: str, path: str, mode: GenerationMode
) -> None:
    operation = served_schema[path][method]
    accepts = itertools.cycle([None, "application/problem+json"])  # both error shapes

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    def run(case: Any) -> None:
        accept = next(accepts)
        case.call_and_validate(headers={"Accept": accept} if accept else None, checks=CHECKS)

    run()


def _validated(schema: Any, method: str, path: str, expected: int, **parts: Any) -> Any:
    case = schema[path][method].Case(**parts)
    response = case.call_and_validate(checks=CHECKS)
    assert response.status_code == expected, (path, response.status_code, response.text[:300])
    return response


@pytest.mark.parametrize("accept", ["application/json", "application/problem+json"])
def test_answers_fuzzing_cannot_reach_conform(
    served_schema: Any, sandbox_url: str, accept: str
) -> None:
    """Real ids, real keys and the OAuth flow: 200s and 404s the document must describe."""
    headers = {"Accept": accept}
    contact = httpx.get(f"{sandbox_url}/v1/contacts", params={"Limit": 1}).json()["contacts"][0]
    listing = httpx.get(f"{sandbox_url}/v1/listings", params={"Limit": 1}).json()["listings"][0]
    for path in ("/v1/contacts/{contactId}", "/v1/contacts/{contactId}/activity"):
        _validated(served_schema, "get", path, 200, path_parameters={"contactId": contact["id"]})
    _validated(
        served_schema,
        "get",
        "/v1/listings/{ListingId}",
        200,
        path_parameters={"ListingId": listing["ListingId"]},
    )
    _validated(
        served_schema,
        "get",
        "/v1/listings/changes",
        200,
        query={"Since": "2025-01-01T00:00:00Z", "ListingIds": listing["ListingId"]},
    )
    for path in ("/v1/contacts/{contactId}", "/v1/listings/{ListingId}"):
        name = path.rsplit("{", 1)[1].rstrip("}")
        _validated(served_schema, "get", path, 404, path_parameters={name: "nope"}, headers=headers)
    _validated(served_schema, "get", "/api/me", 200, query={"api_key": DEMO.api_key})
    _validated(served_schema, "get", "/api/getContacts", 200, query={"api_key": DEMO.api_key})
    _validated(served_schema, "get", "/api/getContacts", 404, query={"api_key": DEMO.empty_api_key})
    _validated(served_schema, "get", "/api/me", 401, query={"api_key": "rfk_wrong"})

    # The OAuth flow: consent page, approval, then the token answer.
    authorize = {
        "client_id": DEMO.client_id,
        "redirect_uri": DEMO.redirect_uri,
        "scope": "listings,contacts",
        "state": "xyz",
    }
    _validated(served_schema, "get", "/authorize", 200, query=authorize)
    page = httpx.get(f"{sandbox_url}/authorize", params=authorize).text
    form_token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert form_token is not None  # the consent form's anti-forgery token
    approved = httpx.post(
        f"{sandbox_url}/authorize",
        data={**authorize, "decision": "approve", "csrf_token": form_token.group(1)},
    )
    assert approved.status_code == 302
    code = httpx.URL(approved.headers["location"]).params["code"]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": DEMO.client_id,
        "client_secret": DEMO.client_secret,
        "redirect_uri": DEMO.redirect_uri,
    }
    _validated(served_schema, "post", "/api/oauth/token", 200, body=form, media_type=FORM)
    _validated(
        served_schema, "post", "/api/oauth/token", 400, body=form, media_type=FORM, headers=headers
    )  # a code works once


def test_protected_mode_answers_conform(protected_sandbox_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{protected_sandbox_url}/openapi.json")
    key = {"X-API-Key": DEMO.api_key}
    _validated(schema, "get", "/v1/listings", 401)
    _validated(schema, "get", "/v1/analytics", 401, headers={"Accept": "application/problem+json"})
    _validated(schema, "get", "/v1/listings", 200, headers=key)
    _validated(schema, "get", "/v1/me", 200, headers=key)
    _validated(schema, "get", "/v1/contacts", 403, headers=key)
    _validated(
        schema, "get", "/v1/contacts", 403, headers={**key, "Accept": "application/problem+json"}
    )
    # discovery (RFC 9728, RFC 8414) and the token endpoint's RFC 6749 5.2 codes (issue #24)
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
    ):
        _validated(schema, "get", path, 200)
    form = {
        "grant_type": "authorization_code",
        "code": "made-up",
        "client_id": DEMO.client_id,
        "client_secret": "wrong",
        "redirect_uri": DEMO.redirect_uri,
    }
    for accept in ("application/json", "application/problem+json"):
        headers = {"Accept": accept}
        bad_client = _validated(
            schema, "post", "/api/oauth/token", 401, body=form, media_type=FORM, headers=headers
        )
        assert bad_client.headers["www-authenticate"] == ['Basic realm="realtyframes"']
        good_client = {**form, "client_secret": DEMO.client_secret}
        _validated(
            schema,
            "post",
            "/api/oauth/token",
            400,
            body=good_client,
            media_type=FORM,
            headers=headers,
        )  # invalid_grant: an unknown code


def test_rate_limited_answers_conform(start_sandbox: Any) -> None:
    sandbox = start_sandbox(rate_limit=(3, 60.0))
    schema = schemathesis.openapi.from_url(f"{sandbox.url}/openapi.json")  # request 1
    _validated(schema, "get", "/v1/me", 200)  # request 2
    _validated(schema, "get", "/v1/me", 200)  # request 3
    limited = _validated(schema, "get", "/v1/analytics", 429)
    assert int(limited.headers["retry-after"][0]) >= 1
    _validated(schema, "get", "/v1/listings", 429, headers={"Accept": "application/problem+json"})
    legacy = {"api_key": DEMO.api_key}  # its own quota: a credential of its own
    for _ in range(3):
        _validated(schema, "get", "/api/me", 200, query=legacy)
    _validated(schema, "get", "/api/me", 429, query=legacy)
