"""The report pages' layout in Debian's chromium (Playwright): every legend entry
visible, no axis title overlapping another text, one colour per idle state and
one name for running across every chart of every page, the frequency timeline
grouped by frequency domain, the trace page's panels sized to their content.

The screenshots in docs/img/ come from here: ``GOVLAB_SCREENSHOTS=docs/img pytest
python/tests/test_report_layout_browser.py`` writes them there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

from test_report_browser import ALL_PLOTS_DRAWN, CHROMIUM, FLAGS, browser, report_file  # noqa: E402,F401

REPO = Path(__file__).resolve().parents[2]
JUNO_TRACE = REPO / "data" / "real" / "lisa" / "sched_load" / "trace.dat"

#: Per plot: the legend entries' boxes and the legend's own box, the axis titles',
#: the subplot titles' and the tick labels' boxes, and the traces' names and colours.
LAYOUT = """() => [...document.querySelectorAll("div.plot")].map(div => {
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const legend = div.querySelector(".legend .bg");
    return {
        id: div.id,
        div: box(div),
        legend: legend ? box(legend) : null,
        entries: [...div.querySelectorAll(".legend .traces")].map(e => [e.textContent, box(e)]),
        titles: [...div.querySelectorAll(".infolayer g[class^='g-x'] text, .infolayer g[class^='g-y'] text")]
            .filter(e => e.textContent).map(e => [e.textContent, box(e)]),
        annotations: [...div.querySelectorAll(".annotation-text-g text")].filter(e => e.textContent).map(e => [e.textContent, box(e)]),
        ticks: [...div.querySelectorAll(".xtick text, .ytick text, .x2tick text, .y2tick text")]
            .filter(e => e.textContent).map(e => [e.textContent, box(e)]),
        traces: div._fullData.map(t => ({
            name: t.name, group: t.legendgroup || "",
            color: (t.type === "bar" ? t.marker.color : (t.line && t.line.color)) || null,
        })),
        legend_title: div._fullLayout.legend && div._fullLayout.legend.title ? div._fullLayout.legend.title.text : "",
        panels: Object.keys(div._fullLayout).filter(k => /^yaxis\\d*$/.test(k)).map(k => [k, div._fullLayout[k]._length]),
    };
})"""


def overlap(a: list[float], b: list[float], slack: float = 1.0) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def inside(inner: list[float], outer: list[float], slack: float = 1.0) -> bool:
    return inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack


def layout_of(browser, path: Path, shot: str | None = None) -> list[dict]:
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function(ALL_PLOTS_DRAWN)
    plots = page.evaluate(LAYOUT)
    where = os.environ.get("GOVLAB_SCREENSHOTS")
    if shot and where:
        page.screenshot(path=str(Path(where) / f"{shot}.png"))
        divs = page.query_selector_all("div.plot")
        states = [d for d, p in zip(divs, plots, strict=True) if p["legend_title"] == "state"]
        for name, div in (("timeline", divs[-1]), ("states", states[0] if states else None)):
            if div is not None:
                div.scroll_into_view_if_needed()
                div.screenshot(path=str(Path(where) / f"{shot}-{name}.png"))
    page.close()
    return plots


#: A tick in SI units (plotly's default for large or small numbers: ``1.648353M``).
SI_TICK = re.compile(r"[−-]?[\d.,]+[kMGTmµnp]")


def check_layout(plots: list[dict]) -> None:
    assert plots
    for p in plots:
        assert p["ticks"], p["id"]
        assert not [t for t, _ in p["ticks"] if SI_TICK.fullmatch(t)], (p["id"], "SI ticks")
        for text, box in p["entries"]:
            assert inside(box, p["div"]), (p["id"], "legend entry outside the plot", text)
            assert p["legend"] is not None and inside(box, p["legend"]), (p["id"], "legend entry scrolled away", text)
        titles = p["titles"]
        for i, (text, box) in enumerate(titles):
            assert inside(box, p["div"]), (p["id"], "axis title clipped", text)
            for other, obox in titles[i + 1 :] + p["annotations"] + p["ticks"]:
                assert not overlap(box, obox), (p["id"], f"axis title {text!r} overlaps {other!r}")


def state_colours(plots: list[dict]) -> dict[str, set[str]]:
    """Colour of each state (running, idle states) in the charts that show states."""
    seen: dict[str, set[str]] = {}
    for p in plots:
        for t in p["traces"]:
            if p["legend_title"] == "state" or t["group"] == "state":
                seen.setdefault(t["name"], set()).add(t["color"])
    return seen


@pytest.fixture(scope="module")
def reproduce_page(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("reproduce-html")
    out = directory / "reproduce.html"
    proc = subprocess.run(
        [sys.executable, "-m", "govlab", "reproduce", "ondemand-copy-prev-load", "--quick",
         "--db", str(directory / "r.sqlite"), "--html", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def juno_trace_page(tmp_path_factory) -> Path:
    from govlab.report import trace_page

    out = tmp_path_factory.mktemp("juno-page") / "trace.html"
    trace_page.write_html(JUNO_TRACE, out)
    return out


@pytest.fixture(scope="module")
def skylake_trace_page(tmp_path_factory) -> Path:
    import govlab
    from govlab.report import trace_page

    directory = tmp_path_factory.mktemp("skylake-page")
    trace = directory / "run.txt"
    govlab.run(workload="periodic:tasks=4,run_us=1000,period_us=5000", duration="100ms", trace=trace)
    out = directory / "trace.html"
    trace_page.write_html(trace, out)
    return out


def test_compare_report_layout_and_state_colours(browser, report_file, skylake_trace_page):  # noqa: F811
    plots = layout_of(browser, report_file)
    check_layout(plots)
    colours = state_colours(plots)
    assert "running" in colours and "busy" not in colours
    assert len(colours) >= 3
    for name, found in colours.items():
        assert len(found) == 1, (name, found)
    # the same idle state has the same colour on a trace page of the same platform
    page = state_colours(layout_of(browser, skylake_trace_page))
    for name in set(page) & set(colours):
        assert page[name] == colours[name], name
    assert len(set(page) & set(colours)) >= 3


def test_reproduce_report_has_its_title_and_the_verdicts(browser, reproduce_page):
    html = reproduce_page.read_text()
    assert "<title>govlab reproduce: ondemand-copy-prev-load (quick)</title>" in html
    assert "Published vs govlab:" in html and 'class="verdicts"' in html and "govlab compare:" not in html
    check_layout(layout_of(browser, reproduce_page, "report"))


def test_trace_page_frequency_by_domain_and_panels_sized_to_content(browser, juno_trace_page):
    plots = layout_of(browser, juno_trace_page, "trace-page")
    check_layout(plots)
    timeline = plots[-1]
    domains = [t["name"] for t in timeline["traces"] if t["group"] == "frequency"]
    assert domains == ["CPUs 0,3-5", "CPUs 1-2"]  # Juno: LITTLE 0,3,4,5 and big 1,2, one entry each
    panels = dict(timeline["panels"])
    assert panels["yaxis"] >= 200  # the frequency panel
    assert panels["yaxis2"] >= 20 * 6  # a row per CPU
    colours = state_colours(plots)
    assert "running" in colours and all(len(c) == 1 for c in colours.values())


def test_trace_stats_says_wakeups_are_not_traced(cli, juno_trace_page):
    proc = cli("trace", "stats", str(JUNO_TRACE))
    assert proc.returncode == 0, proc.stderr
    assert "wakeups: not traced (no sched_wakeup or sched_wakeup_new events)" in proc.stdout
    html = juno_trace_page.read_text()
    assert "wakeups were not traced" in html and ">not traced<" in html
