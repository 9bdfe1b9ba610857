"""The report's comps section: the home's address, facts and ask beside the estimate, its range
and n, the warnings in the page's words, the broker's grid in score order, and an unknown
``--comps`` id as a note in place of the lost report."""

from __future__ import annotations

import datetime as dt
import difflib
import html as htmllib
import re
from pathlib import Path

import pandas as pd
import pytest
from report_html import parse

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.report._render_comps import _estimate, facts_line
from realtyframes.report.compute import check_comps

AS_OF = "2026-06-30"


def test_the_estimate_stands_beside_the_ask_rounded_with_its_n() -> None:
    facts = {"ListPrice": 513_900.0, "StandardStatus": "Active"}
    thin = _estimate(facts, {"value": 901_241.3, "low": 900_136.0, "high": 2_564_901.0, "n": 3}, 5)
    assert thin.startswith('<p class="notice">')  # visible: the report's warning style
    assert "<strong>$901K</strong> (range $900K–$2.56M, n = 3 comps)" in thin
    assert "against an ask of $513,900 (the estimate is 75% above it)" in thin
    assert "Only 3 comparable sales, fewer than 5: too few for a firm estimate" in thin
    assert "901,241" not in thin and "2,564,901" not in thin  # no false precision
    firm = _estimate(facts, {"value": 480_000.0, "low": 450_000.0, "high": 510_000.0, "n": 7}, 5)
    assert firm == (
        "<p>Estimate <strong>$480K</strong> (range $450K–$510K, n = 7 comps) against an ask of "
        "$513,900 (the estimate is 7% below it).</p>"
    )
    sold = _estimate({"ListPrice": 500_000.0, "StandardStatus": "Closed"},
                     {"value": 480_000.0, "low": 450_000.0, "high": 510_000.0, "n": 7}, 5)  # fmt: skip
    assert "against its last ask of $500,000" in sold
    assert "No estimate: no comparable sale" in _estimate(facts, {"value": float("nan"), "n": 0}, 5)


def test_the_home_is_described_in_one_line() -> None:
    home = {"PropertySubType": "Single Family Residence", "BedroomsTotal": 6.0,
            "BathroomsTotalInteger": 5.0, "LivingArea": 3667.0, "YearBuilt": 1993.0,
            "StandardStatus": "Active", "ListPrice": 513_900.0}  # fmt: skip
    assert facts_line(home) == (
        "Single Family Residence · 6 beds · 5 baths · 3,667 sq ft · built 1993 · "
        "Active, asking $513,900"
    )
    sold = {**home, "StandardStatus": "Closed", "ClosePrice": 499_000.0, "BedroomsTotal": 1.0}
    assert "1 bed · " in facts_line(sold)
    assert facts_line(sold).endswith("sold for $499,000 · last asked $513,900")


def test_an_unknown_comps_id_is_a_note_with_a_did_you_mean() -> None:
    listings = pd.DataFrame({"ListingId": ["A12345", "B99"]})
    notes = check_comps(listings, ["A12354", "B99", "ZZZ"], dt.date(2026, 6, 30))
    assert notes == {
        "A12354": "No listing 'A12354' in this market on 2026-06-30; did you mean 'A12345'?",
        "ZZZ": "No listing 'ZZZ' in this market on 2026-06-30",
    }
    ratio = difflib.SequenceMatcher(None, "A12354", "A12345").ratio()
    assert ratio >= 0.6  # the did-you-mean's measure, as documented


def _subject(url: str) -> str:
    """An active Miami listing with at least 3 comps (the report's rules: 3 km, 12 months); Miami
    has sales enough to measure what each difference is worth (Doral's 65 are too few)."""
    with rf.Client(base_url=url, cache=False, progress=False) as client:
        miami = client.sync_listings(City="Miami")
    active = miami[miami["StandardStatus"] == "Active"].sort_values("ListingId")
    for listing_id in active["ListingId"]:
        if len(rf.comps(miami, listing_id, radius_km=3, months=12)) >= 3:
            return str(listing_id)
    raise AssertionError("no active Miami listing with 3 comps in the test sandbox")


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)))


@pytest.mark.slow
def test_the_comps_section_shows_the_home_its_ask_and_a_grid_and_survives_an_unknown_id(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subject = _subject(sandbox_url)
    out = tmp_path / "reports"
    base = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    args = ["--city", "Miami", "--comps", subject, "--comps", "NOPE123", "--as-of", AS_OF]
    code = main(["report", "market", *args, *base])
    captured = capsys.readouterr()
    assert code == 0, captured.err  # the unknown id no longer throws the report away
    (page,) = out.glob("*.html")
    html = page.read_text(encoding="utf-8")
    section = html[html.index('id="comps"') : html.index("</section>", html.index('id="comps"'))]
    text = _text(section)
    assert "No listing 'NOPE123' in this market on 2026-06-30" in text

    grid = pd.read_parquet(page.with_name(page.name.replace(".html", f".comps-{subject}.parquet")))
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        home = client.listing(subject).iloc[0]
    # the home: its address, facts and ask beside the estimate
    assert str(home["UnparsedAddress"]) in text
    assert f"asking ${float(home['ListPrice']):,.0f}" in text
    assert f"{float(home['LivingArea']):,.0f} sq ft" in text
    assert f"(listing {subject})" in text
    # the grid: the home's column, then the comps in the order of the score shown
    cells = parse(html).values
    table = f"comps_{subject}"
    header = re.search(rf'data-table="{table}".*?<thead>(.*?)</thead>', html, re.S)
    assert header is not None
    columns = re.findall(r"<th[^>]*>(.*?)</th>", header.group(1))
    assert columns[1] == "Home"
    assert [c.split(". ", 1)[1] for c in columns[2:]] == list(grid["ListingId"])
    scores = [float(cells[(table, "score", key)][0]) for key in grid["ListingId"]]
    assert scores == sorted(scores) and scores == pytest.approx(list(grid["score"]))
    assert float(cells[(table, "ClosePrice", "subject")][0]) == float(home["ListPrice"])
    for key, adjusted in zip(grid["ListingId"], grid["adjusted_price"], strict=True):
        assert float(cells[(table, "adjusted_price", key)][0]) == pytest.approx(adjusted)
    assert "closest first" not in section
    assert "What a difference is worth in the market's" in text  # the grid's rates, in words
    assert "not adjusted" not in text
    # the estimate lies inside its range, with its n
    weights, prices = grid["weight"].to_numpy(), grid["adjusted_price"].to_numpy()
    found = re.search(r"Estimate \$([\d.]+)K \(range \$([\d.]+)K–\$([\d.]+)K, n = (\d+) comps\)",
                      text)  # fmt: skip
    assert found is not None, text[:500]
    value, low, high = (float(found.group(i)) * 1000 for i in (1, 2, 3))
    assert low <= value <= high and int(found.group(4)) == len(grid)
    assert min(prices) * 0.99 <= low and high <= max(prices) * 1.01 and weights.sum() > 0.999
    # warnings in the page's words: the spread of $/sq ft, when there is one
    ppsf = grid["ppsf"]
    assert (ppsf.max() / ppsf.min() > 2) == ("differ by more than 2 to 1" in text)
    assert not re.search(r"\b(ppsf|adj_\w+|ListPrice|UnparsedAddress)\b", text)


def test_a_listing_that_cannot_be_compared_is_a_note_too() -> None:
    """A subject without coordinates cannot have comps: a note in its place, in plain words."""
    from realtyframes.report.compute import _comps
    from realtyframes.report.options import MarketReportOptions

    listings = pd.DataFrame({
        "ListingId": ["S", "C", "D"], "StandardStatus": ["Active", "Closed", "Closed"],
        "PropertyType": "Residential", "PropertySubType": "Condominium",
        "BedroomsTotal": 2, "LivingArea": 1000.0, "ClosePrice": [None, 5e5, 5e5],
        "CloseDate": pd.to_datetime([None, "2026-06-01", "2026-06-01"], utc=True),
        "Latitude": [None, 25.76, None], "Longitude": [None, -80.19, None],
    })  # fmt: skip
    options = MarketReportOptions(as_of=AS_OF, comps=("S", "C", "X"))
    found, notes = _comps(listings, options)
    assert list(found) == ["C"]
    # a closed sale without coordinates is said among the comps' warnings, in plain words
    assert found["C"].attrs["warnings"][-1] == (
        "1 closed sale of the market has no map position (no coordinates), so could not be "
        "considered as a comparable sale."
    )
    assert notes == {
        "S": "No comparable sales for S: the subject 'S' has no coordinates.",
        "X": "No listing 'X' in this market on 2026-06-30",
    }


def _market(ppsf: list[float]) -> pd.DataFrame:
    """A home asking $513,900 and closed sales of 1,000 sq ft at the given $/sq ft nearby."""
    rows = [("S", "Active", None, None, 513_900.0, 25.7617)]
    rows += [(f"P{i}", "Closed", v * 1000.0, "2026-06-01", None, 25.7617 + (i + 1) * 0.001)
             for i, v in enumerate(ppsf)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["ListingId", "StandardStatus", "ClosePrice", "CloseDate",
                                        "ListPrice", "Latitude"])  # fmt: skip
    frame["CloseDate"] = pd.to_datetime(frame["CloseDate"], utc=True)
    frame["MajorChangeTimestamp"] = pd.Timestamp("2026-06-30", tz="UTC")
    frame["UnparsedAddress"] = frame["ListingId"] + " Brickell Ave, Miami, FL 33131"
    return frame.assign(PropertyType="Residential", PropertySubType="Condominium",
                        BedroomsTotal=2, LivingArea=1000.0, Longitude=-80.1918)  # fmt: skip


@pytest.mark.parametrize(
    ("ppsf", "spread", "few"),
    [([150.0, 220.0, 400.0], True, False), ([480.0, 500.0, 520.0], False, False),
     ([480.0, 500.0], False, True)],
)  # fmt: skip
def test_the_page_shows_the_ask_and_the_warnings_in_its_own_words(
    ppsf: list[float], spread: bool, few: bool
) -> None:
    from realtyframes.report._render_comps import _one

    comps = rf.comps(_market(ppsf), "S")
    text = _text(_one("S", comps, 5))
    assert "S Brickell Ave, Miami, FL 33131" in text and "asking $513,900" in text
    assert "against an ask of $513,900" in text
    assert ("differ by more than 2 to 1" in text) == spread
    assert ("fewer than 3, too few for a firm estimate" in text) == few
    # 3 sales are too few to measure what a difference is worth: said, and no rates shown
    assert "not adjusted for size, age, beds or baths" in text
    assert "What a difference is worth" not in text
    assert not re.search(r"\b(ppsf|adj_\w+|ListPrice|UnparsedAddress|attrs)\b", text)
