"""The HTML report in a real headless browser: Debian's chromium driven by Playwright.

Playwright's own browser download is never used: the browser is
/usr/bin/chromium, which `make test` installs when it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

from test_report import EVIL, build_report  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
#: Headless, and nothing that would reach for the network on its own.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not os.path.exists(CHROMIUM):
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (`make test` installs it)", allow_module_level=True)

#: Every plot drawn, each with its traces and its data.
ALL_PLOTS_DRAWN = """() => {
    const plots = [...document.querySelectorAll("div.plot")];
    return plots.length > 0 && plots.every(d => d._fullLayout && d._fullData && d.querySelector(".main-svg"));
}"""

PLOT_CONTENT = """() => [...document.querySelectorAll("div.plot")].map(d => ({
    id: d.id,
    traces: d._fullData.length,
    values: d._fullData.reduce((n, t) => n + (t.x ? t.x.length : 0), 0),
    drawn_traces: d.querySelectorAll(".scatterlayer .trace, .barlayer .trace").length,
    markers: d.querySelectorAll(".scatterlayer .point, .barlayer .point").length,
    lines: [...d.querySelectorAll(".scatterlayer path.js-line")].filter(p => (p.getAttribute("d") || "").length > 2).length,
}))"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("browser")
    page, _ = build_report(directory)
    path = directory / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def opened(browser, report_file):
    """The report open in a fresh page, with everything it logged, asked or fetched."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    seen: dict[str, list[str]] = {"console errors": [], "page errors": [], "dialogs": [], "requests": []}

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            seen["requests"].append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: seen["console errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["page errors"].append(str(e)))

    def dialog(d):
        seen["dialogs"].append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.goto(report_file.as_uri())
    page.wait_for_function(ALL_PLOTS_DRAWN)
    yield page, seen
    context.close()


def test_report_opens_offline_and_every_plot_renders_with_data(opened, report_file):
    page, seen = opened
    assert seen == {"console errors": [], "page errors": [], "dialogs": [], "requests": []}
    plots = page.evaluate(PLOT_CONTENT)
    assert len(plots) == report_file.read_text().count('<div class="plot"') >= 9
    for plot in plots:
        assert plot["traces"] > 0 and plot["values"] > 0, plot
        assert plot["drawn_traces"] > 0, plot
        assert plot["markers"] + plot["lines"] > 0, plot
    # the timeline (the last plot) draws a line per CPU's frequency and a line per state
    timeline = plots[-1]
    assert timeline["lines"] >= 2, timeline


def test_script_names_are_shown_as_text_and_never_run(opened):
    page, seen = opened
    # shown as written: in the tables, in the legends, and in a hover label from the trace
    assert EVIL in page.inner_text("body")
    legends = page.evaluate('() => [...document.querySelectorAll(".legendtext")].map(e => e.textContent)')
    assert EVIL in legends
    hovered = page.evaluate(
        """() => {
        const div = [...document.querySelectorAll("div.plot")].pop();
        for (let c = 0; c < div._fullData.length; c++) {
            const tasks = div._fullData[c].customdata || [];
            const p = tasks.findIndex(t => t.includes("script"));
            if (p >= 0) {
                Plotly.Fx.hover(div, [{curveNumber: c, pointNumber: p}]);
                return div.querySelector(".hoverlayer").textContent;
            }
        }
        return null;
    }"""
    )
    assert hovered is not None and EVIL in hovered
    # and never run: no dialog, and no script element but ours
    assert seen["dialogs"] == [] and seen["page errors"] == []
    scripts = page.evaluate(
        '() => [...document.scripts].map(s => [s.type, s.id, s.textContent.includes("alert(1)")])'
    )
    assert all(kind == "application/json" for kind, _, with_alert in scripts if with_alert)
    executable = [s for s in scripts if s[0] != "application/json"]
    assert len(executable) == 2  # plotly.js and the loader
    assert page.evaluate("() => document.querySelectorAll('body script:not([type])').length") == 1


def test_the_timeline_is_the_engines_and_spans_the_run(opened):
    page, _ = opened
    drawn = page.evaluate(
        """() => {
        const div = [...document.querySelectorAll("div.plot")].pop();
        const states = div._fullData.filter(t => t.legendgroup === "state");
        const xs = states.flatMap(t => [...t.x].filter(x => x !== null));
        return {names: states.map(t => t.name), start: Math.min(...xs), end: Math.max(...xs),
                caption: div.closest("section, figure, div.figure, body").innerText};
    }"""
    )
    # every CPU's row runs from the start to the end of the 150 ms run, in ns-exact ms
    assert (drawn["start"], drawn["end"]) == (0, pytest.approx(150.0, abs=1e-9))
    assert "running" in drawn["names"] and len(drawn["names"]) >= 2
    assert "Built by the engine from the run's trace" in drawn["caption"]


#: How far the page reaches to the right, and the window's width.
WIDTHS = "() => [document.documentElement.scrollWidth, window.innerWidth]"


@pytest.mark.parametrize("width", [1300, 1000])
def test_the_report_does_not_overflow_the_window(browser, report_file, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(report_file.as_uri())
    page.wait_for_function(ALL_PLOTS_DRAWN)
    scroll, inner = page.evaluate(WIDTHS)
    assert scroll <= inner, f"the report is {scroll} px wide in a {inner} px window"
    # The idle-state legend sits above its plot, not in a scrolled box beside it.
    legends = page.evaluate(
        """() => [...document.querySelectorAll("div.plot")]
            .filter(d => d._fullLayout.legend && d._fullLayout.legend.title.text === "state")
            .map(d => [d._fullLayout.legend.orientation,
                       [...d.querySelectorAll(".legend .scrollbar")].map(b => b.getBBox().height)])"""
    )
    assert legends, "no idle-state residency plot"
    for orientation, scrollbars in legends:
        assert orientation == "h" and all(h == 0 for h in scrollbars), (orientation, scrollbars)
    page.close()


@pytest.fixture(scope="module")
def wide_trace_page(tmp_path_factory) -> Path:
    """The page of a Skylake run's trace: 7 idle states x 4 columns per CPU, wider than any window."""
    import govlab
    from govlab.report import trace_page

    directory = tmp_path_factory.mktemp("trace-page")
    trace = directory / "run.txt"
    govlab.run(workload="periodic:tasks=4,run_us=1000,period_us=5000", duration="100ms", trace=trace)
    out = directory / "trace.html"
    trace_page.write_html(trace, out)
    return out


def test_a_wide_trace_table_scrolls_inside_the_page(browser, wide_trace_page):
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(wide_trace_page.as_uri())
    page.wait_for_function(ALL_PLOTS_DRAWN)
    widest = page.evaluate("() => Math.max(...[...document.querySelectorAll('table')].map(t => t.scrollWidth))")
    assert widest > 1000  # the table is wider than the window ...
    scroll, inner = page.evaluate(WIDTHS)
    assert scroll <= inner, f"the trace page is {scroll} px wide in a {inner} px window"  # ... the page is not
    page.close()
