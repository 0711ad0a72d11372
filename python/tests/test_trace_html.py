"""``govlab trace stats --html``: the page of a real recording in Debian's
chromium (Playwright, never its own browser download), its numbers against
``--format json``, escaping, and writing whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from govlab import trace
from govlab.report import trace_page
from test_trace import SCHED_LOAD

EVIL = "<script>alert(1)</script>"
#: A file name that would run a script if it reached the page as markup.
EVIL_NAME = "evil<img src=x onerror=alert(2)>.txt"

#: Two CPUs; the task that changes CPU 0's frequency and the one that runs are named like a script.
EVIL_TRACE = f"""\
cpus=2
          <idle>-0     [000]     1.000000: cpu_frequency:        state=1000000 cpu_id=0
          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> {EVIL}:100 [120]
 {EVIL}-100   [000]     1.001000: cpu_frequency:        state=2000000 cpu_id=0
 {EVIL}-100   [000]     1.002000: sched_switch:         {EVIL}:100 [120] S ==> swapper/0:0 [120]
          <idle>-0     [000]     1.002000: cpu_idle:             state=1 cpu_id=0
          <idle>-0     [001]     1.003000: cpu_idle:             state=0 cpu_id=1
          <idle>-0     [000]     1.008000: cpu_idle:             state=4294967295 cpu_id=0
          <idle>-0     [001]     1.010000: cpu_idle:             state=4294967295 cpu_id=1
"""


def test_a_bad_trace_or_place_writes_nothing_and_keeps_the_old_page(cli, tmp_path):
    out = tmp_path / "page.html"
    out.write_text("old page")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00garbage that is no trace\n")
    proc = cli("trace", "stats", str(bad), "--html", str(out))
    assert proc.returncode == 2 and proc.stderr.startswith("govlab: error:") and "Traceback" not in proc.stderr
    assert out.read_text() == "old page"
    proc = cli("trace", "stats", str(SCHED_LOAD), "--html", str(tmp_path / "missing" / "page.html"))
    assert proc.returncode == 2 and "cannot write the HTML report" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "page.html"]


def test_the_page_has_a_number_cell_per_figure_and_the_timeline_of_every_cpu(tmp_path):
    out = tmp_path / "sched_load.html"
    stats = trace_page.write_html(SCHED_LOAD, out)
    page = out.read_text()
    assert page.count('data-path="') >= len(stats["cpus"]) * 20
    timeline = json.loads(page.split('id="plot-1-data">')[1].split("</script>")[0])
    rows = next(a for k, a in timeline["layout"].items() if k.startswith("yaxis") and a.get("type") == "category")
    assert rows["categoryarray"] == [f"CPU {c}" for c in reversed(range(stats["nr_cpus"]))]


def test_a_small_limit_bins_the_timeline_and_says_so(tmp_path):
    stats, timeline = trace.stats_and_timeline(SCHED_LOAD, max_spans=5)
    assert all(len(c["segments"]) <= 5 and c["resolution_s"] for c in timeline["cpus"])
    assert stats == trace.stats(SCHED_LOAD)


# --- in the browser ------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"

#: Every number cell: its JSON path, scale and text.
CELLS = """() => [...document.querySelectorAll("td[data-path]")].map(td => [
    JSON.parse(td.dataset.path), parseFloat(td.dataset.scale), td.textContent])"""

#: Per CPU row of the timeline: the state traces drawn on it.
ROWS = """() => {
    const div = document.getElementById("plot-1");
    const axis = Object.values(div._fullLayout).find(a => a && a.type === "category");
    const rows = {};
    for (const t of div._fullData) {
        if (t.legendgroup !== "state") continue;
        for (const y of t.y) if (y !== null) rows[y] = (rows[y] || 0) + 1;
    }
    return {categories: [...axis.categoryarray], rows: rows, drawn: div.querySelectorAll(".scatterlayer .trace").length};
}"""


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium as test_report_browser launches it (which skips or fails when it is missing)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM) and not os.environ.get("CI"):
        pytest.skip(f"{CHROMIUM} is missing (`make test` installs it)")
    from test_report_browser import FLAGS

    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def _open(browser, path: Path):
    """``path`` in a fresh page with no network; the page and what it logged, asked or fetched."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    seen: dict[str, list[str]] = {"console errors": [], "page errors": [], "dialogs": [], "requests": []}

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            seen["requests"].append(r.request.url)
            r.abort()

    def dialog(d):
        seen["dialogs"].append(d.message)
        d.dismiss()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: seen["console errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["page errors"].append(str(e)))
    page.on("dialog", dialog)
    page.goto(path.as_uri())
    from test_report_browser import ALL_PLOTS_DRAWN

    page.wait_for_function(ALL_PLOTS_DRAWN)
    return context, page, seen


def _at(d, path):
    for key in path:
        d = d[key]
    return d


def test_a_real_recordings_page_loads_shows_every_cpu_and_the_json_figures(browser, cli, tmp_path):
    out = tmp_path / "sched_load.html"
    proc = cli("trace", "stats", str(SCHED_LOAD), "--format", "json", "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    context, page, seen = _open(browser, out)
    try:
        assert seen == {"console errors": [], "page errors": [], "dialogs": [], "requests": []}
        rows = page.evaluate(ROWS)
        cpus = [f"CPU {c}" for c in range(d["nr_cpus"])]
        assert sorted(rows["categories"]) == sorted(cpus) and sorted(rows["rows"]) == sorted(cpus)
        assert rows["drawn"] >= 2
        cells = page.evaluate(CELLS)
        assert len(cells) >= 20 * d["nr_cpus"]
        for path, scale, text in cells:
            decimals = len(text.split(".")[1]) if "." in text else 0
            assert abs(_at(d, path) * scale - float(text)) <= 0.5 * 10**-decimals + 1e-12, (path, text)
        # every CPU's busy %, each idle state's usage and each frequency's time are among them
        shown = {tuple(p) for p, _, _ in cells}
        for i, c in enumerate(d["cpus"]):
            assert ("cpus", i, "busy_pct") in shown
            assert all(("cpus", i, "idle_states", k, "usage") in shown for k in range(len(c["idle_states"])))
            assert all(("cpus", i, "time_in_state", khz) in shown for khz in c["time_in_state"])
    finally:
        context.close()


def test_script_names_from_the_trace_and_the_file_name_are_text(browser, tmp_path):
    source = tmp_path / EVIL_NAME
    source.write_text(EVIL_TRACE)
    out = tmp_path / "evil.html"
    trace_page.write_html(source, out, platform="skylake-e3-1240v5")
    context, page, seen = _open(browser, out)
    try:
        assert EVIL_NAME in page.inner_text("h1")
        hovered = page.evaluate(
            """() => {
            const div = document.getElementById("plot-1");
            for (let c = 0; c < div._fullData.length; c++) {
                const p = (div._fullData[c].customdata || []).findIndex(t => String(t).includes("script"));
                if (p >= 0) {
                    Plotly.Fx.hover(div, [{curveNumber: c, pointNumber: p}]);
                    return div.querySelector(".hoverlayer").textContent;
                }
            }
            return null;
        }"""
        )
        assert hovered is not None and EVIL in hovered
        assert seen["dialogs"] == [] and seen["page errors"] == []
        assert page.evaluate("() => document.querySelectorAll('img').length") == 0
        assert page.evaluate("() => document.querySelectorAll('body script:not([type])').length") == 1
    finally:
        context.close()
