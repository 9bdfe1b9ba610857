"""The client edition: one printed page per area, and a cover with the comparison in a pack.

Page structure (the PDF writer and the tests rely on these names): ``<section class="cover">``
(a pack only), then per area ``<section class="area" data-area="NAME">`` (``break-before:
page``); in each, ``div.price-change`` (the headline price change), ``ul.summary``, the table
``data-table="lmu-<area>"`` (``data-month``), ``div.client-chart`` (``data-chart``,
``data-period``: first and last period of its data) and the table ``cuts-<area>``; with
``--comps``, a last page ``<section class="comps-page" id="comps">``: each home with its
adjusted comparable sales (``_render_comps``). No code identifiers, no links to data files, no
website, lead or contact data.
"""

from __future__ import annotations

import pandas as pd

from realtyframes.report._charts import chart, render_chart
from realtyframes.report._client_charts import price_chart, sales_chart, span, supply_chart
from realtyframes.report._html import Cell, esc, render_table
from realtyframes.report._render_comps import comps_section
from realtyframes.report.areas import AreaUpdate
from realtyframes.report.brand import logo_data_uri
from realtyframes.report.compute import MarketReport
from realtyframes.report.local import LMU_METRICS
from realtyframes.report.summary import FIRM_BAND

__all__ = ["CLIENT_CSS", "FIRM_BAND", "render_client_page"]

#: The map's panel (inches, width x height): the charts' landscape cell, which the view fills
#: (a coastal strip gets the land and sea around it, not a sliver of a cell).
MAP_PANEL = (4.4, 2.4)

CLIENT_CSS = """
:root { --ink: #1d2733; --muted: #5b6776; --line: #d9dee5; --accent: #1f5f8b; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 13px/1.4 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
section.area, section.cover, section.comps-page { background: #fff; max-width: 8.5in; margin: 16px auto;
  padding: 0.4in 0.45in; border: 1px solid var(--line); box-shadow: 0 1px 4px rgba(0,0,0,.08); }
.brand { display: flex; align-items: center; gap: 12px; border-bottom: 3px solid var(--accent);
  padding-bottom: 6px; margin-bottom: 8px; }
.brand img { max-height: 40px; max-width: 160px; }
.brand .name { font-weight: 700; font-size: 15px; }
.brand .agent { margin-left: auto; color: var(--muted); font-size: 11.5px; text-align: right; }
h1 { font-size: 21px; margin: 2px 0 0; }
.scope { color: var(--muted); font-size: 11.5px; margin: 0 0 6px; }
.price-change { display: flex; gap: 18px; align-items: baseline; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
.price-change .big { font-size: 22px; font-weight: 700; white-space: nowrap; }
.price-change .label, .price-change .side { color: var(--muted); font-size: 11.5px; }
.mix { font-size: 11.5px; margin: 2px 0 6px; }
ul.summary { margin: 4px 0 8px; padding-left: 18px; }
ul.summary li { margin: 1px 0; }
.table-wrap { margin: 4px 0 8px; }
table { border-collapse: collapse; width: 100%; font-size: 11.5px; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); font-size: 11px; padding: 0 0 3px; caption-side: top; }
th, td { padding: 2px 6px; border-bottom: 1px solid var(--line); text-align: left; }
thead th { background: var(--bg); font-weight: 600; }
.num { text-align: right; white-space: nowrap; }
.note { color: var(--muted); font-size: 10px; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 12px; }
.client-chart figure { margin: 0; }
.client-chart img { width: 100%; height: auto; max-height: 2.3in; object-fit: contain; display: block; }
.client-chart[data-chart="map"] img { max-height: 3.1in; }
figcaption { color: var(--muted); font-size: 10px; }
.empty { color: var(--muted); font-style: italic; }
.notice { background: #fff8e6; border-left: 3px solid #d9a400; padding: 4px 8px; margin: 6px 0; }
section.cover .note { display: block; white-space: normal; }
section.cover th { white-space: normal; }
section.comps-page td { text-align: right; }
section.comps-page figure.chart { margin: 6px 0; break-inside: avoid; }
section.comps-page figure.chart img { max-width: 100%; max-height: 4.2in; width: auto; height: auto; }
.disclaimer { color: var(--muted); font-size: 10px; border-top: 1px solid var(--line);
  margin-top: 6px; padding-top: 4px; }
@page { size: Letter; margin: 0.35in; }
@media print {
  body { background: #fff; font-size: 9pt; }
  section.area, section.cover, section.comps-page { margin: 0; padding: 0; max-width: none; border: 0;
    box-shadow: none; break-after: auto; }
  section.area { break-before: page; page-break-before: always; break-inside: avoid; }
  section.area:first-of-type { break-before: auto; page-break-before: auto; }
  section.cover + section.area { break-before: page; page-break-before: always; }
  section.comps-page { break-before: page; page-break-before: always; }
  table { font-size: 7.5pt; }
  .client-chart img { max-height: 1.95in; }
  .client-chart[data-chart="map"] img { max-height: 2.45in; }
  section.comps-page figure.chart img { max-height: 2.1in; }
}
"""


def _brand(report: MarketReport) -> str:
    brand = report.options.brand
    logo = (
        f'<img src="{logo_data_uri(brand.logo)}" alt="{esc(brand.name or "logo")}">'
        if brand.logo
        else ""
    )
    name = f'<span class="name">{esc(brand.name)}</span>' if brand.name else ""
    agent = f'<span class="agent">{esc(brand.agent)}</span>' if brand.agent else ""
    return f'<div class="brand">{logo}{name}{agent}</div>'


def _disclaimer(report: MarketReport) -> str:
    o = report.options
    text = o.brand.disclaimer_for(o.source, o.day.isoformat())
    return f'<p class="disclaimer">{esc(text)}</p>'


def _n_note(n: float, min_sample: int) -> str | None:
    if pd.isna(n):
        return None
    return f"n={int(n)}" if n >= min_sample else f"n={int(n)}, under {min_sample}: not shown"


def _lmu_table(area: AreaUpdate, min_sample: int) -> str:
    t = area.table
    month = pd.Timestamp(t.attrs["month"])
    covered = bool(t.attrs["covered"])
    rows: list[list[Cell | str]] = []
    for metric, label, kind, _how in LMU_METRICS:
        row: list[Cell | str] = [label]
        for col in ("month", "month_before", "month_change", "year", "year_before", "year_change"):
            value = t.loc[metric, col]
            if col.endswith("_change"):
                note = None
                shown_kind = "percent"
                if kind == "percent" and not pd.isna(value):
                    note = "points"
            else:
                shown_kind = kind
                n_col = f"{col}_n"
                note = (
                    _n_note(t.loc[metric, n_col], min_sample)
                    if metric in ("median_dom", "median_sale_price", "avg_sale_to_list")
                    else None
                )
                if metric == "months_of_supply" and pd.isna(value):
                    note = "too few sales"
                if col.endswith("_before") and not covered:
                    note = "data start later"
            row.append(Cell(value, shown_kind, row=metric, col=col, note=note))
        rows.append(row)
    m = month.strftime("%B %Y")
    header = ["", m, f"{(month - pd.DateOffset(years=1)).strftime('%B %Y')}", "Change",
              f"12 months to {month.strftime('%b %Y')}", "A year earlier", "Change"]  # fmt: skip
    table = render_table(
        f"lmu-{area.name}", header, rows,
        caption=f"Residential sales of {area.name}: {m} and the 12 months to its end, each "
        "against a year earlier. n: the homes sold behind a median or average.",
        numeric_header=[False] + [True] * 6,
    )  # fmt: skip
    return table.replace("<table ", f'<table data-month="{month.strftime("%Y-%m")}" ', 1)


def _price_change(area: AreaUpdate) -> str:
    c = area.change
    if pd.isna(c.change):
        big = '<span class="big">—</span>'
        label = f"Prices vs a year earlier: not measured ({esc(c.reason)})"
    elif c.high - c.low > FIRM_BAND:
        big = '<span class="big">—</span>'
        label = (
            f"Prices of comparable homes, {esc(c.period)} vs {esc(c.earlier)}: no firm figure "
            f"on {c.n} and {c.n_before} sales; somewhere between {c.low * 100:+.1f} % and "
            f"{c.high * 100:+.1f} % (95 % range)"
        )
    else:
        big = f'<span class="big">{c.change * 100:+.1f} %</span>'
        label = (
            f"Prices of comparable homes, {esc(c.period)} vs {esc(c.earlier)} "
            f"(95 % range {c.low * 100:+.1f} % to {c.high * 100:+.1f} %; {c.n} sales)"
        )
    if pd.isna(c.median_change):
        side = f"Median sale price, {c.period}: too few sales ({c.n}; a year earlier {c.n_before})"
    else:
        side = (
            f"Median sale price, {c.period}: ${c.median:,.0f} (n={c.n}), "
            f"{c.median_change * 100:+.1f} % against ${c.median_before:,.0f} (n={c.n_before})"
        )
    mix = f'<p class="mix">{esc(c.mix)}</p>' if c.mix else ""
    return (
        f'<div class="price-change">{big}<span class="label">{label}</span>'
        f'<span class="side">{esc(side)}</span></div>{mix}'
    )


def _quarter_frame(area: AreaUpdate) -> pd.DataFrame:
    """The price chart's data: per quarter the median and n (``rf.market_trends``) and the
    constant-quality price (the index times the median of its base quarter)."""
    q = area.quarters
    out = pd.DataFrame({
        "period_begin": pd.to_datetime(q["period_begin"]),
        "median": pd.to_numeric(q["median_sale_price"], errors="coerce").to_numpy(float),
        "median_n": q["median_sale_price_n"].fillna(0).to_numpy(),
    })  # fmt: skip
    index = area.change.index
    if index is None or index.empty:
        for col in ("level", "low", "high"):
            out[col] = float("nan")
        return out
    ix = index.set_index(pd.to_datetime(index["period_begin"]))
    base = pd.Timestamp(index.attrs.get("base", ix.index.min()))
    base_median = out.set_index("period_begin")["median"].get(base, float("nan"))
    for col, src in (("level", "index"), ("low", "index_low"), ("high", "index_high")):
        out[col] = ix[src].reindex(out["period_begin"]).to_numpy(float) / 100.0 * base_median
    return out


def _chart(job_id: str, area: AreaUpdate, job: object, alt: str, period: str) -> str:
    figure = render_chart(job, alt, f"{job_id}", caption=None)  # type: ignore[arg-type]
    return f'<div class="client-chart" data-chart="{esc(job_id)}" data-period="{esc(period)}">{figure}</div>'


def _charts(area: AreaUpdate, day: str) -> str:
    from realtyframes import plots

    parts = []
    months = area.months
    if len(months):
        when = pd.to_datetime(months["period_begin"])
        period = f"{when.min():%Y-%m}..{when.max():%Y-%m}"
        words = span(when, "M")
        parts.append(_chart("sales", area, chart(
            sales_chart, months[["period_begin", "homes_sold", "new_listings"]].copy(),
            f"Closed sales and new listings by month, {words}\n{area.name}, residential"),
            "Closed sales and new listings by month", period))  # fmt: skip
        parts.append(_chart("supply", area, chart(
            supply_chart, months[["period_begin", "active_listings", "months_of_supply"]].copy(),
            f"Homes for sale (month end) and months supply, {words}\n{area.name}, residential"),
            "Inventory and months supply by month", period))  # fmt: skip
    quarters = _quarter_frame(area)
    if len(quarters):
        period = f"{quarters['period_begin'].min():%Y-%m}..{quarters['period_begin'].max():%Y-%m}"
        words = span(quarters["period_begin"], "Q")
        parts.insert(0, _chart("prices", area, chart(
            price_chart, quarters,
            f"Prices by quarter, {words}: homes sold in {area.name}\n"
            "constant-quality price (band: 95 %) and median (n: sales)"),
            "Prices by quarter: constant-quality price and median sale price", period))  # fmt: skip
    if len(area.active):
        title = (
            f"{len(area.active):,} homes for sale in {area.name} on {day}, by list price per sq ft"
        )
        drawn = chart(plots.listing_map, area.active, color="ppsf", title=title,
                      map_size=MAP_PANEL, fill=True)  # fmt: skip
        parts.append(_chart("map", area, drawn, title, day))
    return f'<div class="charts">{"".join(parts)}</div>'


def _cuts(area: AreaUpdate, report: MarketReport) -> str:
    o = report.options
    since = o.window_start.strftime("%Y-%m-%d")
    if area.cuts.empty:
        return f'<p class="empty">No price cut on a home for sale since {since}.</p>'
    spec = (("UnparsedAddress", "Address", "text"), ("previous_price", "Was", "money"),
            ("current_price", "Now", "money"), ("drop_pct", "Cut", "percent"),
            ("last_drop_at", "Cut on", "date"), ("DaysOnMarket", "Days on market", "days"))  # fmt: skip
    rows: list[list[Cell | str]] = []
    for i, row in area.cuts.iterrows():
        rows.append([Cell(row[c], k, row=str(i), col=c) for c, _, k in spec])
    return render_table(
        f"cuts-{area.name}", [h for _, h, _ in spec], rows,
        caption=f"The biggest price cuts on homes for sale in {area.name}, "
        f"{since} to {o.day.isoformat()} (latest cut, by percentage).",
        numeric_header=[False] + [True] * 5,
    )  # fmt: skip


def _area_section(area: AreaUpdate, report: MarketReport) -> str:
    o = report.options
    month = pd.Timestamp(area.table.attrs["month"]).strftime("%B %Y")
    summary = "".join(f"<li>{esc(s)}</li>" for s in area.summary)
    return (
        f'<section class="area" data-area="{esc(area.name)}">{_brand(report)}'
        f"<h1>{esc(area.name)}: market update, {esc(month)}</h1>"
        f'<p class="scope">Residential homes · data as of {o.day.isoformat()}</p>'
        f'{_price_change(area)}<ul class="summary">{summary}</ul>'
        f"{_lmu_table(area, o.min_sample)}{_charts(area, o.day.isoformat())}{_cuts(area, report)}"
        f"{_disclaimer(report)}</section>"
    )


def _cover(report: MarketReport, areas: list[AreaUpdate]) -> str:
    o = report.options
    month = pd.Timestamp(areas[0].table.attrs["month"])
    rows: list[list[Cell | str]] = []
    metrics = (("homes_sold", "Closed sales", "count"), ("median_sale_price", "Median sales price", "money"),
               ("median_dom", "Days on market until sale", "days"),
               ("active_listings", "Inventory (month end)", "count"),
               ("months_of_supply", "Months supply", "number"))  # fmt: skip
    for area in areas:
        t = area.table
        row: list[Cell | str] = [area.name]
        for metric, _label, kind in metrics:
            n = t.loc[metric, "month_n"]
            note = (
                _n_note(n, o.min_sample)
                if metric in ("median_sale_price", "median_dom")
                else (
                    f"n={int(t.loc['homes_sold', 'month'])}"
                    if metric == "months_of_supply"
                    else None
                )
            )
            row.append(Cell(t.loc[metric, "month"], kind, row=area.name, col=metric, note=note))
        c = area.change
        firm = not pd.isna(c.change) and c.high - c.low <= FIRM_BAND  # as on the area's page
        note = f"n={c.n}" if firm else f"n={c.n}; no firm figure"
        shown = c.change if firm else None
        row.append(Cell(shown, "percent", row=area.name, col="price_change", note=note))
        rows.append(row)
    table = render_table(
        "cover", ["Area", *[lbl for _, lbl, _ in metrics], "Prices vs a year earlier"], rows,
        caption=f"{month.strftime('%B %Y')}, residential; prices: comparable homes, latest "
        "quarter against the same quarter a year earlier. n: the homes behind each figure.",
        numeric_header=[False] + [True] * (len(metrics) + 1),
    )  # fmt: skip
    return (
        f'<section class="cover">{_brand(report)}'
        f"<h1>Market update, {month.strftime('%B %Y')}</h1>"
        f'<p class="scope">{len(areas)} areas · data as of {o.day.isoformat()}</p>'
        f"{table}{_disclaimer(report)}</section>"
    )


def render_client_page(report: MarketReport) -> str:
    """The client edition as one self-contained HTML document (see the module)."""
    areas = list((report.areas or {}).values())
    title = f"Market update — {report.options.day.isoformat()}"
    if report.options.brand.name:
        title = f"{report.options.brand.name}: {title}"
    body = [_cover(report, areas)] if len(areas) > 1 else []
    body += [_area_section(area, report) for area in areas]
    if not areas:
        body.append(
            '<section class="area" data-area=""><p class="empty">No market data.</p></section>'
        )
    comps = comps_section(report)  # the homes of --comps, each with its adjusted sales
    if comps is not None:
        body.append(
            f'<section class="comps-page" id="{comps.anchor}">{_brand(report)}'
            f"<h1>{esc(comps.title)}</h1>{comps.body}{_disclaimer(report)}</section>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CLIENT_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
