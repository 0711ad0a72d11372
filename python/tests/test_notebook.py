"""The notebook API through ``import govlab``: comparisons, stored results and
traces as objects, each checked against what the command or trace-cmd says."""

from __future__ import annotations

import re
import sqlite3
import sys
from pathlib import Path

import pytest

import govlab

sys.path.insert(0, str(Path(__file__).resolve().parent / "regression"))
from common import real_data  # noqa: E402  (shared with the regression cases)

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "experiments" / "quick.toml"
REAL = real_data()
# `trace-cmd report` (trace-cmd 3.1.6, Debian 12) of the neighbouring trace.dat, kept
# beside it (data/real/lisa/SOURCE.md); the same command on this machine prints it byte for byte.
TRACES = [REAL / "lisa" / "example_rtapp" / "trace.dat", REAL / "lisa" / "sched_load" / "trace.dat"]
SWITCH = re.compile(
    r"\[(\d+)\]\s+(\d+\.\d+): sched_switch:\s+(.*?):(-?\d+) \[(-?\d+)\] (\S+) ==> (.*?):(-?\d+) \[(-?\d+)\]$"
)
LISA_SWITCH = ["__cpu", "__pid", "__comm", "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]


@pytest.fixture(scope="module")
def quick_db(tmp_path_factory) -> tuple[Path, govlab.Comparison]:
    db = tmp_path_factory.mktemp("nb") / "quick.sqlite"
    return db, govlab.compare(QUICK, db=db, progress=False)


def test_compare_text_is_what_report_prints(quick_db, cli):
    db, comparison = quick_db
    proc = cli("report", str(db))
    assert proc.returncode == 0, proc.stderr
    assert comparison.to_text() == proc.stdout
    md = cli("report", str(db), "--format", "markdown")
    assert comparison.to_markdown() == md.stdout


def test_open_results_is_the_same_without_simulating(quick_db, cli, monkeypatch):
    db, comparison = quick_db
    from govlab.sweep import worker

    def refuse(*_a, **_k):
        raise AssertionError("open_results simulated a run")

    monkeypatch.setattr(worker, "simulate", refuse)
    opened = govlab.open_results(db)
    assert opened.to_text() == comparison.to_text() == cli("report", str(db)).stdout
    assert opened.runs.equals(comparison.runs)


def test_comparison_tables(quick_db):
    _, c = quick_db
    runs = c.runs
    assert len(runs) == 12  # 2 configurations x 2 task counts x 3 seeds
    assert set(runs["config"]) == {"ondemand", "schedutil"} and set(runs["axis_value"]) == {1, 4}
    assert runs["finished"].all() and (runs["energy_j"] > 0).all()
    amean = c.table("Amean")
    assert list(amean.index.get_level_values("label")) == ["1", "4"]
    assert ("schedutil", "pct") in amean.columns and ("ondemand", "value") in amean.columns
    # the table's figure is the mean of the runs
    one = runs[(runs["config"] == "schedutil") & (runs["axis_value"] == 1)]["value"].mean()
    assert amean[("schedutil", "value")].iloc[0] == pytest.approx(one)
    assert set(c.scores["config"]) == {"ondemand", "schedutil"}
    assert "govlab.Comparison" in c._repr_html_() and "schedutil" in c._repr_html_()
    figs = c.figures()
    assert len(figs) >= 4 and all(hasattr(f, "to_plotly_json") for f in figs)
    with pytest.raises(govlab.InvalidValueError, match="^stat: invalid value 'Median': one of Amean"):
        c.table("Median")


def test_compare_takes_toml_text_and_dicts(tmp_path):
    text = QUICK.read_text().replace('repeats = 3', 'repeats = 1').replace('duration = "2s"', 'duration = "200ms"')
    a = govlab.compare(text, db=tmp_path / "a.sqlite", progress=False)
    assert len(a.runs) == 4
    import tomllib

    b = govlab.compare(tomllib.loads(text), db=tmp_path / "b.sqlite", progress=False)
    assert b.to_text() == a.to_text()


def test_errors_are_govlab_errors_with_the_command_message(quick_db, cli, tmp_path):
    db, _ = quick_db
    with pytest.raises(govlab.GovlabError, match="^jobs must be from 1 to 256, got 0$"):
        govlab.compare(QUICK, db=db, jobs=0)
    # a database without that experiment: the command's message, --experiment named as the argument
    proc = cli("report", str(db), "--experiment", "nope")
    assert proc.returncode == 2
    with pytest.raises(govlab.ResultsError) as e:
        govlab.open_results(db, experiment="nope")
    assert proc.stderr.strip() == f"govlab: error: {e.value}"
    missing = tmp_path / "missing.sqlite"
    proc = cli("report", str(missing))
    with pytest.raises(govlab.GovlabError) as e:
        govlab.open_results(missing)
    assert proc.stderr.strip() == f"govlab: error: {e.value}"
    proc = cli("compare", str(tmp_path / "none.toml"))
    with pytest.raises(govlab.GovlabError) as e:
        govlab.compare(tmp_path / "none.toml")
    assert isinstance(e.value, OSError) and proc.stderr.strip() == f"govlab: error: {e.value}"
    with pytest.raises(govlab.FileAccessError):
        govlab.Trace(tmp_path / "none.dat")
    with pytest.raises(govlab.InvalidValueError, match="^backend: invalid value 'spark'"):
        govlab.Trace(TRACES[1]).df_event("sched_switch", backend="spark")


def test_a_broken_database_is_a_govlab_error(tmp_path):
    db = tmp_path / "bad.sqlite"
    sqlite3.connect(db).execute("create table x (y)").connection.commit()
    with pytest.raises(govlab.GovlabError):
        govlab.open_results(db)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.parent.name)
def test_sched_switch_rows_are_trace_cmd_reports(path):
    report = path.with_name("trace.report.txt").read_text().splitlines()
    expected = [SWITCH.search(line) for line in report if " sched_switch: " in line]
    assert expected and all(expected)
    df = govlab.Trace(path).df_event("sched_switch")
    assert len(df) == len(expected)
    assert list(df.columns) == LISA_SWITCH and df.index.name == "Time"
    assert list(df["__cpu"]) == [int(m[1]) for m in expected]
    assert list(df["prev_pid"]) == [int(m[4]) for m in expected]
    assert list(df["next_comm"].astype(str)) == [m[7] for m in expected]
    assert list(df["next_pid"]) == [int(m[8]) for m in expected]
    # trace-cmd prints the nanoseconds rounded to whole microseconds
    assert [(round(t * 1e9) + 500) // 1000 for t in df.index] == [int(m[2].replace(".", "")) for m in expected]
    pl = govlab.Trace(path).df_event("sched_switch", backend="polars")
    assert pl.height == len(expected) and pl.columns == ["Time", *LISA_SWITCH]
    assert pl["next_pid"].to_list() == list(df["next_pid"])


def test_trace_counts_stats_and_untyped_events():
    t = govlab.Trace(TRACES[1])
    report = TRACES[1].with_name("trace.report.txt").read_text()
    for name in ("sched_load_se", "sched_load_cfs_rq", "cpu_idle", "sched_migrate_task", "cpu_frequency"):
        assert t.events[name] == len(t.df_event(name)) == report.count(f" {name}: "), name
    se = t.df_event("sched_load_se")
    assert {"cpu", "path", "comm", "pid", "load", "util"} <= set(se.columns)
    idle = t.df_event("cpu_idle")
    assert set(idle["state"]) <= {-1, 0, 1, 2}
    freq = t.df_event("cpu_frequency")
    assert list(freq.columns[-2:]) == ["cpu", "frequency"] and freq["frequency"].max() == 850000
    s = t.stats()
    assert list(s.cpus["cpu"]) == list(range(6))
    assert s.raw == govlab.trace.stats(TRACES[1])
    assert set(s.idle.columns) == {"cpu", "state", "usage", "time_s"} and len(s.accuracy) == 6
    tl = t.timeline()
    assert set(tl["state"]) >= {"running"} and (tl["end_s"] >= tl["start_s"]).all()
    with pytest.raises(govlab.MissingTraceEventError, match="did you mean 'sched_switch'"):
        t.df_event("sched_swich")
    assert "<table>" in t._repr_html_()


def test_simulated_cpu_frequency_matches_its_trace_text(tmp_path):
    kw = dict(workload="periodic:tasks=2,run_us=1500,period_us=7000", cpufreq="schedutil", duration="300ms", seed=3)
    text_path = tmp_path / "run.txt"
    on_file = govlab.run(**kw, trace=text_path)
    in_memory = govlab.run(**kw, trace=True)
    assert on_file.to_dict() == in_memory.to_dict()
    lines = [
        re.search(r"\[(\d+)\] \S+\s+(\d+\.\d+): cpu_frequency:\s+state=(\d+) cpu_id=(\d+)$", line)
        for line in text_path.read_text().splitlines()
        if " cpu_frequency: " in line
    ]
    assert len(lines) > 5
    df = govlab.Trace(in_memory).df_event("cpu_frequency")
    assert len(df) == len(lines)
    assert list(df["frequency"]) == [int(m[3]) for m in lines]
    assert list(df["cpu"]) == [int(m[4]) for m in lines]
    assert list(df["__cpu"]) == [int(m[1]) for m in lines]
    # the text keeps whole microseconds, memory nanoseconds
    assert all(abs(t - float(m[2])) < 1e-6 for t, m in zip(df.index, lines))
    from_file = govlab.Trace(on_file).df_event("cpu_frequency")
    assert list(from_file["frequency"]) == list(df["frequency"])
    assert govlab.Trace(in_memory).format == "govlab-run"
    with pytest.raises(govlab.UnsupportedError):
        govlab.Trace(in_memory).replay()
    replayed = govlab.Trace(on_file).replay(cpufreq="performance")
    assert replayed.sim_time_s > 0


def test_trace_needs_a_traced_result(periodic_result):
    with pytest.raises(govlab.InvalidValueError, match="kept no trace"):
        govlab.Trace(periodic_result)


@pytest.mark.slow
def test_reproduce_quick_has_verdicts(tmp_path, cli):
    db = tmp_path / "r.sqlite"
    r = govlab.reproduce("ondemand-copy-prev-load", quick=True, db=db, progress=False)
    proc = cli("reproduce", "ondemand-copy-prev-load", "--quick", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert r.to_text() == proc.stdout
    v = r.verdicts
    assert len(v) > 0 and {"benchmark", "config", "pct", "published_pct"} <= set(v.columns)


NOTEBOOKS = sorted((REPO / "examples" / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_example_notebooks_run_from_outside_the_repository(notebook, tmp_path):
    """Each example notebook, copied to a temporary directory outside the repository and run
    there top to bottom (it finds govlab's data with govlab.data_file, not from its own place)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    assert len(NOTEBOOKS) >= 2
    assert not tmp_path.resolve().is_relative_to(REPO)
    copy = tmp_path / notebook.name
    copy.write_bytes(notebook.read_bytes())
    nb = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    # A progress bar is replaced by what was done, so a saved notebook does not keep it at 0 %.
    texts = [
        o.get("data", {}).get("text/plain", "")
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    ]
    assert not any("0%|" in t for t in texts)
    if "govlab.compare(" in "".join(c.source for c in nb.cells):
        assert any("runs simulated in" in t for t in texts)


def test_significance_is_one_dtype_and_figures_have_titles(quick_db):
    _, c = quick_db
    table = c.table("all")
    significant = [col for col in table.columns if col[1] == "significant"]
    assert significant and all(str(table[col].dtype) == "boolean" for col in significant)
    # the baseline has no test: <NA>, not None beside booleans in an object column
    baseline = [col for col in significant if col[0] == "ondemand"][0]
    assert table[baseline].isna().all()
    assert str(c.scores["significant"].dtype) == "boolean" and str(c.summary["significant"].dtype) == "boolean"
    titles = [fig.layout.title.text for fig in c.figures()]
    assert titles and all(t and t.startswith("quick: ") for t in titles)
    assert len(set(titles)) == len(titles)


def test_run_docstring_names_what_exists(periodic_result):
    """govlab.run's docstring promised result.trace; a Result has none: the doc says govlab.Trace(result)."""
    assert "result.trace" not in govlab.run.__doc__ and "govlab.Trace(result)" in govlab.run.__doc__
    assert not hasattr(periodic_result, "trace")
