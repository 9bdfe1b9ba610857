"""One request reads top to bottom (#25): the declarations the load, the command line and the
client read, each stated once."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from realtyframes.api import MAX_LISTING_IDS, MAX_PAGE_SIZE, ApiClient
from realtyframes.cli import main
from realtyframes.errors import QueryError
from realtyframes.loaders import ENDPOINTS, MAX_IDS_PER_REQUEST, OPERATIONS, PAGE_SIZE, fetch_pages


def test_the_search_row_declares_where_its_details_come_from() -> None:
    search, detail = ENDPOINTS["listings"], ENDPOINTS["listing"]
    assert search.details is detail
    assert detail.path_param == "ListingId"
    assert [e.name for e in ENDPOINTS.values() if e.details is not None] == ["listings"]


def test_page_size_and_id_limit_are_the_spec_declarations() -> None:
    assert (PAGE_SIZE, MAX_IDS_PER_REQUEST) == (MAX_PAGE_SIZE, MAX_LISTING_IDS) == (50, 100)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_max_results_has_one_rule_everywhere(bad: object) -> None:
    with (
        ApiClient("http://127.0.0.1:9") as api,
        pytest.raises(QueryError, match="max_results") as paging,
    ):
        fetch_pages(api, "/v1/listings", {}, item_key="listings", max_results=bad)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="max_results") as endpoint:
        ENDPOINTS["listings"].call({}, {"max_results": bad})
    assert paging.value.allowed == endpoint.value.allowed == "an int >= 1, or None"


def test_query_error_keeps_the_allowed_values_and_pickles_them() -> None:
    error = QueryError("Pool", "expected a boolean", (True, False))
    assert str(error) == "Pool: expected a boolean; allowed: True, False"
    assert error.values == (True, False) and error.allowed == "True, False"
    again = pickle.loads(pickle.dumps(error))
    assert (again.values, str(again)) == (error.values, str(error))
    assert QueryError("City", "empty string", "a city name").values is None


def test_fetch_help_comes_from_the_operations(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fetch", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for operation in ("listings", "listing_changes", "contact_activity", "legacy_contacts"):
        path = OPERATIONS[operation].path.replace("{}", "{" + "contactId" + "}")
        assert f"(GET {path})" in text, operation
    with pytest.raises(SystemExit):
        main(["fetch", "listings", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--SeniorCommunity VALUE true, exclude" in text


def test_fetch_refuses_a_bad_max_results_by_the_loaders_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.parquet"
    code = main(["fetch", "listings", "--max-results", "0", "--out", str(out)])
    assert code == 1
    assert "max_results: 0 is not allowed; allowed: an int >= 1, or None" in capsys.readouterr().err
    assert not out.exists()


def test_the_api_client_holds_its_settings_and_shares_its_pool() -> None:
    with ApiClient("http://127.0.0.1:9", api_key="k-1", max_concurrency=2) as api:
        assert api.has_api_key
        with ApiClient("http://127.0.0.1:9", token="t") as signed_in:
            assert not signed_in.has_api_key  # a token alone does not reach the legacy host
        fast = api.with_options(max_concurrency=8, timeout=5.0)
        assert (fast.max_concurrency, fast.timeout) == (8, 5.0)
        assert api.max_concurrency == 2  # the original kept
        assert fast.http is api.http  # one pool, one rate budget
        assert api.mask("key k-1") == "key ***"
