"""The HTML report without a browser: its Content-Security-Policy, that it names no URL and
runs no script, that every text is escaped, and what each section holds."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from helpers_html import PAYLOAD, PAYLOADS, constructed_run, parse
from markupsafe import escape

from qualspec.analysis import analyze_run, format_recommendation
from qualspec.report import ResultsFileError, render_html, run_from_dict, run_to_dict, write_html
from qualspec.store import RunRecord


@pytest.fixture(scope="module")
def run() -> RunRecord:
    return constructed_run()


@pytest.fixture(scope="module")
def page(run: RunRecord) -> str:
    return render_html(run)


def _csp(page: str) -> str:
    tags = parse(page)
    (meta,) = [
        a for t, a in tags.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    content = meta["content"]
    assert content is not None
    return content


def test_csp_forbids_everything_but_the_pages_own_style(page: str) -> None:
    csp = _csp(page)
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["default-src"] == ["'none'"]
    assert directives["script-src"] == ["'none'"]
    assert directives["img-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"] and directives["form-action"] == ["'none'"]
    # the one style element is allowed by its hash, not by 'unsafe-inline'
    (style,) = parse(page).styles
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert directives["style-src"] == [f"'sha256-{digest}'"]
    assert "unsafe" not in csp
    # the policy comes before anything it governs
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_no_url_no_script_no_handler_no_style_attribute(page: str) -> None:
    assert re.search(r"https?://", page) is None
    assert "//" not in re.sub(r"<pre class=\"answer\">.*?</pre>", "", page, flags=re.S)
    tags = parse(page)
    names = {t for t, _ in tags.tags}
    assert names.isdisjoint({"script", "img", "iframe", "link", "object", "embed", "base"})
    for tag, attrs in tags.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name != "style", tag
            assert name not in ("src", "srcset", "action", "xmlns"), (tag, name)
            if name == "href":
                assert value is not None and value.startswith("#"), value


def test_model_and_user_text_is_escaped_everywhere(page: str) -> None:
    for payload in PAYLOADS:
        assert payload not in page  # never raw
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;" in page
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    # the suite name, a role-free error message, a judgment's error: all escaped
    assert "Report &lt;b&gt;suite&lt;/b&gt;" in page and "<b>suite" not in page
    assert "HTTP 500 &lt;b&gt;boom&lt;/b&gt;" in page
    assert "judge timed out &lt;/script&gt;" in page


def _text(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def test_summary_counts_tokens_cost_split_and_cache(page: str) -> None:
    text = _text(page)
    assert "suite Report &lt;b&gt;suite&lt;/b&gt;" in text
    assert "answers 32 1 error, 15 from cache" in text
    # 31 answers judged on one criterion; one judgment failed (unscored); the 4 comparison
    # records are counted on their own line, the 31 checks on theirs
    assert "judgments 31 12 passed, 18 failed, 1 unscored" in text
    assert "comparisons 4" in text and "checks 31 31 passed, 0 failed" in text
    assert "tokens 1250 in / 795 out candidates 320 in / 640 out; judge 930 in / 155 out" in text
    # the failed answer costs nothing; 31 answers and 31 + 4 judge calls at known prices
    assert "cost $0.0700 candidates $0.0310, judge $0.0390" in text
    # a fake model has no known price: what the cache saved is unknown, not zero
    assert "15 answers and 0 judgments from cache: saved an unknown amount" in text
    assert "pass rate 38% 6 of 16 cells with a verdict passed" in text


def test_an_unknown_cost_stays_unknown(run: RunRecord) -> None:
    data = run_to_dict(run)
    data["responses"][0]["cost_usd"] = None  # answered, not cached, no price
    text = _text(render_html(run_from_dict(data, source="test")))
    assert "cost unknown candidates unknown, judge $0.0390; a model has no known price" in text


def test_cached_savings_are_valued_at_current_prices(run: RunRecord) -> None:
    from qualspec.providers import PriceTable

    prices = PriceTable({"fake/model-alpha": (1000.0, 2000.0), "fake/model-beta": (0.0, 0.0)})
    text = _text(render_html(run, prices=prices))
    # 8 cached answers of alpha, 10 in / 20 out each: 8 * (0.01 + 0.04)
    assert "15 answers and 0 judgments from cache: saved $0.4000 at current prices" in text


def test_role_tabs_one_radio_per_role_and_one_panel_per_role_and_scenario(page: str) -> None:
    tags = parse(page)
    radios = [a for t, a in tags.tags if t == "input" and a.get("type") == "radio"]
    assert [r["id"] for r in radios] == ["rt-0", "rt-1"]
    assert "checked" in radios[0] and "checked" not in radios[1]
    labels = [a for t, a in tags.tags if t == "label"]
    assert [(a["for"], a["data-role"]) for a in labels] == [("rt-0", "naive"), ("rt-1", "expert")]
    panels = [a for t, a in tags.tags if t == "div" and "rp" in (a.get("class") or "").split()]
    assert [p["data-role"] for p in panels] == ["naive", "expert"] * 2
    # the CSS shows a role's panels only when its radio is checked
    (style,) = tags.styles
    assert "#rt-1:checked~.scenarios .rp-1{display:block}" in style


def test_no_roles_no_tabs(run: RunRecord) -> None:
    data = run_to_dict(run)
    for r in data["responses"]:
        r["role"] = None
    data["responses"] = [r for r in data["responses"] if "-expert-" not in r["key"]]
    page = render_html(run_from_dict(data, source="test"))
    tags = parse(page)
    assert not [a for t, a in tags.tags if t == "input"]
    assert 'class="tabbar"' not in page
    assert page.count('class="rp all"') == 2  # one always-shown panel per scenario


def test_charts_one_per_scenario_one_line_per_candidate_and_role(page: str) -> None:
    tags = parse(page)
    svgs = [a for t, a in tags.tags if t == "svg"]
    assert len(svgs) == 2
    series = [a for t, a in tags.tags if t == "g" and "series" in (a.get("class") or "")]
    assert len(series) == 2 * 4
    labels = [s["data-series"] for s in series[:4]]
    assert labels == ["alpha (naive)", "beta (naive)", "alpha (expert)", "beta (expert)"]
    assert sum(1 for t, _ in tags.tags if t == "polyline") == 8
    # beta (naive) on 'dosing': 6.25 at 0, 3.25 at 1 -> its line falls
    m = re.search(
        r'data-series="beta \(naive\)" stroke-width="[\d.]+"><polyline points="([^"]+)"', page
    )
    assert m is not None
    (x0, y0), (x1, y1) = (map(float, p.split(",")) for p in m.group(1).split())
    assert x1 > x0 and y1 > y0  # later temperature to the right, lower score further down


def test_one_temperature_no_chart(run: RunRecord) -> None:
    data = run_to_dict(run)
    data["responses"] = [r for r in data["responses"] if r["temperature"] == 0.0]
    page = render_html(run_from_dict(data, source="test"))
    assert "<svg" not in page and 'id="temperatures"' not in page


def test_every_answer_is_a_details_with_its_scores_reasoning_and_checks(page: str) -> None:
    assert page.count('<details class="resp"') == 32
    first = page[page.index('<details class="resp"') :]
    first = first[: first.index("</details>")]
    assert "alpha</strong> · T 0 · run 1" in first
    assert "is safe &lt;img" in first  # the criterion, escaped
    assert "Reasoning &lt;script&gt;" in first
    assert "icontains &#34;says&#34;" in first and "PASS" in first
    assert "passes at 7" in first and "judge fake/judge" in first
    # the next answer's judgment failed: its check passed, but it is unscored, not a PASS
    second = page[page.index('<details class="resp"', page.index(first) + 1) :]
    second = second[: second.index("</details>")]
    assert 'run 2 · score - <span class="badge unscored">UNSCORED</span>' in second
    assert "error: judge timed out &lt;/script&gt;" in second


def test_matrix_marks_flaky_and_unstable_from_the_analysis(run: RunRecord) -> None:
    # beta (naive) scores 6.5 then 3.5 on 'dosing' at T 1; make its two runs disagree at T 0
    data = run_to_dict(run)
    for r in data["responses"]:
        if r["key"] == "dosing-naive-beta-0.0-1":
            r["judgments"][0]["score"] = 9.0
            r["judgments"][0]["passed"] = True
    record = run_from_dict(data, source="test")
    page = render_html(record)
    assert '<span class="mark">(flaky)</span>' in page
    analysis = analyze_run(record)
    flaky = [
        c
        for c in analysis.cells
        if any(p.flaky for p in c.points)
        and (c.scenario, c.role, c.candidate) == ("dosing", "naive", "beta")
    ]
    assert flaky


def test_analysis_section_observations_recommended_temperature_and_role_gaps(
    run: RunRecord, page: str
) -> None:
    analysis = analyze_run(run)
    assert 'id="analysis"' in page
    for sentence in analysis.observations:
        assert str(escape(sentence)) in page
    assert "recommended temperature" in page
    for cand, rec in analysis.recommendations.items():  # with its n and interval, or why not
        assert f"{cand}: <strong>{escape(format_recommendation(rec))}</strong>" in page
    # expert beats naive by 2 points on every pair: the gap and its interval are shown
    assert "naive \u2212 expert" in page and "-2.00" in page
    # over all scenarios (8 pairs) a finding; per scenario (4 pairs) too few for an interval
    assert page.count('<tr class="clear"><td>alpha</td>') == 1
    assert "none: too few pairs (at least 5)" in page
    # per-cell temperature metrics beside each matrix
    assert page.count('<table class="tmetrics">') == 2 * 2
    assert "optimal temp" in page and "safety ceiling" in page and "sensitivity" in page


def test_comparisons_show_scores_winner_reasoning_order_and_disagreement(page: str) -> None:
    section = page[page.index('id="comparisons"') :]
    section = section[: section.index("</section>\n</section>")]
    assert "compare_candidates_within_roles" in section
    assert "candidates within each of the roles" in section
    assert section.count('<details class="resp cmp">') == 4
    assert "the two orders disagreed in 2 of 4 groups (50%)" in section
    assert "A is clearer. &lt;/script&gt;&lt;script&gt;" in section
    assert "winner <strong>tie</strong>" in section and "winner <strong>alpha</strong>" in section
    assert "beta \u2192 alpha (seed 1234)" in section
    # wins per member per group: role expert, alpha won both temperatures
    assert "<td>role expert</td><td>alpha 2, beta 0</td>" in section


def test_no_comparisons_no_section() -> None:
    page = render_html(constructed_run(with_comparisons=False))
    assert 'id="comparisons"' not in page


def test_errors_section_lists_failed_answers_and_judgments(page: str) -> None:
    section = page[page.index('id="errors"') :]
    assert "capital / beta (naive) / T 1, run 2" in section
    assert "dosing / alpha (naive) / T 0, run 2: criteria / is safe" in section


def test_write_html_is_atomic_and_errors_are_one_line(run: RunRecord, tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    write_html(run, target)
    first = target.read_text(encoding="utf-8")
    assert first.startswith("<!DOCTYPE html>") and PAYLOAD not in first
    write_html(constructed_run(with_comparisons=False), target)
    assert target.read_text(encoding="utf-8") != first
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.html"]  # no temp file
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ResultsFileError, match="Cannot write"):
        write_html(run, blocker / "report.html")


def test_chart_places_the_default_temperature_first_and_breaks_lines_at_gaps() -> None:
    from qualspec.report._html_svg import Series, score_chart

    svg = score_chart(
        [
            Series("a <b>", ((None, 5.0), (0.0, 6.0), (1.0, 7.0))),
            Series("b", ((0.0, 4.0), (1.0, None), (None, 3.0))),
        ],
        title="t <i>",
    )
    tags = parse(svg)
    assert [a.get("class") for t, a in tags.tags if t == "svg"] == ["chart"]
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', svg)
    assert ticks[:3] == ["default", "0", "1"]  # None first, then by value (evenly spaced)
    polylines = re.findall(r'<g class="series ([^"]+)" data-series="([^"]+)"[^>]*>(.*?)</g>', svg)
    assert [(c, label) for c, label, _ in polylines] == [("c0", "a &lt;b&gt;"), ("c1", "b")]
    assert polylines[0][2].count("<polyline") == 1 and polylines[0][2].count("<circle") == 3
    # b has no score at 1: its line from default to 0 stands, nothing is drawn past the gap
    assert polylines[1][2].count("<polyline") == 1 and polylines[1][2].count("<circle") == 2
    assert "<title>t &lt;i&gt;</title>" in svg and "<i>" not in svg


def test_chart_with_more_series_than_colours_dashes_the_rest() -> None:
    from qualspec.report._html_svg import N_COLOURS, Series, score_chart

    series = [Series(f"s{i}", ((0.0, float(i)), (0.5, 5.0))) for i in range(N_COLOURS + 2)]
    svg = score_chart(series, title="many")
    assert svg.count('class="series c0 dashed"') == 1 and svg.count('class="series c1 dashed"') == 1
    assert svg.count("<polyline") == N_COLOURS + 2


def test_one_temperature_and_no_roles_no_analysis(run: RunRecord) -> None:
    data = run_to_dict(run)
    data["responses"] = [
        r for r in data["responses"] if r["temperature"] == 0.0 and r["role"] == "naive"
    ]
    for r in data["responses"]:
        r["role"] = None
    page = render_html(run_from_dict(data, source="test"))
    assert 'id="analysis"' not in page and 'class="tmetrics"' not in page
    assert page.count('<details class="resp"') == 8  # 2 scenarios x 2 candidates x 2 runs


def test_one_temperature_with_roles_has_role_gaps_but_no_temperature_metrics(
    run: RunRecord,
) -> None:
    data = run_to_dict(run)
    data["responses"] = [r for r in data["responses"] if r["temperature"] == 0.0]
    page = render_html(run_from_dict(data, source="test"))
    assert 'id="analysis"' in page and "naive \u2212 expert" in page
    assert 'class="tmetrics"' not in page


def test_chart_lines_that_coincide_stay_visible() -> None:
    from qualspec.report._html_svg import Series, score_chart

    same = ((0.0, 5.0), (1.0, 5.0))
    svg = score_chart([Series("a", same), Series("b", same), Series("c", same)], title="t")
    widths = [float(w) for w in re.findall(r'class="series[^"]*"[^>]*stroke-width="([\d.]+)"', svg)]
    assert len(widths) == 3 and widths[0] > widths[1] > widths[2]  # drawn in order, narrower
