"""The closings' details of an incremental sync after a 404 (a listing the server no longer
has): the details already read are kept, the others asked one by one, and the requests the sync
counts are the ones it sent (the sync's counts and its plan compare with them)."""

from __future__ import annotations

import json

import pytest

from realtyframes.loaders import ENDPOINTS
from realtyframes.loaders._sync_fetch import Fetching

GONE = "GONE-404"


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_details_after_a_404_count_the_requests_sent(make_client, sandbox_url, concurrency):
    client, log = make_client(sandbox_url, max_concurrency=concurrency)
    ids = client.listings(City="Miami", max_results=6)["ListingId"].tolist()
    asked = [*ids[:2], GONE, *ids[2:]]
    before = log.count
    bodies, gone, requests = Fetching(client.session.api, ENDPOINTS["listings"], False).details(
        asked
    )
    assert gone == [GONE] and len(bodies) == len(ids)
    assert [json.loads(body)["ListingId"] for body in bodies] == ids  # each read once, in order
    assert requests == log.count - before
    if concurrency == 1:  # two read, the 404, then the 404 and the four left one by one
        assert requests == 3 + 5
