"""Nothing lost, nothing hung (issue 39): an output never replaces an input,
an input that is not a regular file is refused at once, an empty value is an
error, and a wrong type given to the Python API is a GovlabError."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import govlab
from govlab.exceptions import InvalidTypeError, InvalidValueError

REPO = Path(__file__).resolve().parents[2]
PLATFORM = REPO / "data" / "platforms" / "skylake-e3-1240v5.toml"
RTAPP = REPO / "data" / "real" / "rt-app" / "template.json"

TINY = """\
[experiment]
name = "tiny"
platform = "skylake-e3-1240v5"
workload = "periodic:tasks=2,run_us=1000,period_us=5000"
duration = "50ms"
repeats = 2
seed = 1

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "schedutil"
cpufreq = "schedutil"
"""

TRACE = """\
# tracer: nop
          <idle>-0     [000] d..2.  100.000000: cpu_idle: state=1 cpu_id=0
          <idle>-0     [000] d..2.  100.001000: cpu_idle: state=4294967295 cpu_id=0
          <idle>-0     [000] d..2.  100.002000: cpu_frequency: state=800000 cpu_id=0
"""


@pytest.fixture(scope="module")
def results(cli, tmp_path_factory) -> tuple[Path, Path]:
    """A small experiment and the results database `compare` wrote for it."""
    d = tmp_path_factory.mktemp("db")
    exp = d / "tiny.toml"
    exp.write_text(TINY)
    db = d / "R.sqlite"
    proc = cli("compare", str(exp), "--db", str(db), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    return exp, db


# --- 1. an output onto an input ------------------------------------------------------


def _snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def test_report_html_onto_the_database_is_refused(cli, one_error, results):
    _, db = results
    before = _snapshot(db, Path(f"{db}-wal"))
    proc = cli("report", str(db), "--html", str(db))
    one_error(proc, "--html", "DB", "same file")
    assert _snapshot(db, Path(f"{db}-wal")) == before


def test_compare_html_onto_the_database_or_the_experiment_is_refused(cli, one_error, results, tmp_path):
    exp, db = results
    for html in (db, exp):
        before = _snapshot(db, exp)
        proc = cli("compare", str(exp), "--db", str(db), "--html", str(html))
        one_error(proc, "--html", "same file")
        assert _snapshot(db, exp) == before


def test_compare_html_through_a_symlink_and_db_onto_the_experiment_are_refused(cli, one_error, results, tmp_path):
    exp, db = results
    link = tmp_path / "report.html"
    link.symlink_to(exp)
    before = exp.read_bytes()
    one_error(cli("compare", str(exp), "--db", str(db), "--html", str(link)), "--html", "EXPERIMENT.toml")
    one_error(cli("compare", str(exp), "--db", str(exp)), "--db", "EXPERIMENT.toml")
    assert exp.read_bytes() == before


def test_compare_db_onto_a_platform_file_the_experiment_reads_is_refused(cli, one_error, tmp_path):
    platform = tmp_path / "machine.toml"
    platform.write_bytes(PLATFORM.read_bytes())
    exp = tmp_path / "e.toml"
    exp.write_text(TINY.replace('platform = "skylake-e3-1240v5"', f'platform = "{platform}"'))
    before = platform.read_bytes()
    one_error(cli("compare", str(exp), "--html", str(platform)), "--html", "machine.toml")
    assert platform.read_bytes() == before


def test_trace_stats_html_onto_the_trace_is_refused(cli, one_error, tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text(TRACE)
    one_error(cli("trace", "stats", str(trace), "--html", str(trace)), "--html", "FILE", "same file")
    assert trace.read_text() == TRACE


def test_run_trace_or_plot_onto_the_platform_workload_or_governor_file_is_refused(cli, one_error, tmp_path):
    platform = tmp_path / "P.toml"
    platform.write_bytes(PLATFORM.read_bytes())
    rtapp = tmp_path / "w.json"
    rtapp.write_bytes(RTAPP.read_bytes())
    cases = [
        (["--platform", str(platform), "--trace", str(platform)], platform, "--platform"),
        (["--workload", f"rtapp:file={rtapp}", "--trace", str(rtapp)], rtapp, "--workload"),
        (["--platform", str(platform), "--turbostat-interval", "10ms", "--plot", str(platform)], platform, "--plot"),
    ]
    for args, victim, option in cases:
        before = victim.read_bytes()
        one_error(cli("run", *args, "--duration", "20ms"), option, "same file")
        assert victim.read_bytes() == before, args


def test_two_outputs_onto_one_file_are_refused(cli, one_error, tmp_path):
    platform = tmp_path / "P.toml"
    platform.write_bytes(PLATFORM.read_bytes())
    out = tmp_path / "out.txt"
    one_error(
        cli("run", "--turbostat-interval", "10ms", "--trace", str(out), "--plot", str(out), "--duration", "20ms"),
        "--plot", "--trace",
    )
    assert not out.exists()


def test_a_new_output_beside_the_inputs_is_still_written(cli, results, tmp_path):
    _, db = results
    html = tmp_path / "r.html"
    proc = cli("report", str(db), "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    assert html.read_text().startswith("<!")


# --- 2. FIFO inputs ------------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "in.fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "stats", "{f}"],
        ["trace", "replay", "{f}"],
        ["run", "--workload", "rtapp:file={f}", "--duration", "10ms"],
        ["run", "--platform", "{t}", "--duration", "10ms"],
        ["run", "--workload", "{t}", "--duration", "10ms"],
        ["compare", "{t}"],
        ["list", "governors", "--py", "{p}"],
        ["run", "--cpuidle", "py:{p}:G", "--duration", "10ms"],
        ["trace", "stats", "{trace}", "--platform", "{t}"],
        ["report", "{t}"],
    ],
    ids=["trace-stats", "trace-replay", "rtapp", "platform", "workload-file", "compare", "py-governor",
         "py-governor-run", "trace-stats-platform", "report-db"],
)
def test_a_fifo_input_is_refused_at_once(cli, one_error, tmp_path, args):
    f = tmp_path / "in.fifo"
    os.mkfifo(f)
    t = tmp_path / "in.toml"
    os.mkfifo(t)
    p = tmp_path / "gov.py"
    os.mkfifo(p)
    trace = tmp_path / "t.txt"
    trace.write_text(TRACE)
    argv = [a.format(f=f, t=t, p=p, trace=trace) for a in args]
    proc = cli(*argv, timeout=20)
    one_error(proc, "not a regular file")


def test_the_python_api_refuses_a_fifo_at_once(fifo):
    # In a child process: a blocked open would hang the test run itself.
    code = (
        "import sys, govlab\n"
        "for call in (govlab.Trace, govlab.load_experiment, govlab.trace.stats):\n"
        "    try:\n"
        "        call(sys.argv[1])\n"
        "    except govlab.GovlabError as e:\n"
        "        assert 'not a regular file' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit('no error')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=20)
    assert proc.returncode == 0, proc.stderr


# --- 3. empty values -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args, option",
    [
        (["run", "--trace", ""], "--trace"),
        (["run", "--turbostat-interval", "10ms", "--plot", ""], "--plot"),
        (["report", "x.sqlite", "--html", ""], "--html"),
        (["compare", "e.toml", "--db", ""], "--db"),
        (["reproduce", "--quick", ""], "NAME"),
        (["run", "--kernel", " "], "--kernel"),
    ],
)
def test_an_empty_value_is_refused(cli, one_error, args, option):
    one_error(cli(*args, timeout=60), option, "empty")


def test_a_database_name_ending_in_a_slash_is_refused(cli, one_error, tmp_path):
    exp = tmp_path / "e.toml"
    exp.write_text(TINY)
    one_error(cli("compare", str(exp), "--db", f"{tmp_path}/x.sqlite/"), "x.sqlite/", "directory")
    assert not (tmp_path / "x.sqlite").exists()


def test_absurd_jobs_are_refused(cli, one_error, tmp_path):
    exp = tmp_path / "e.toml"
    exp.write_text(TINY)
    for jobs in ("99999999999999999999999", "100000", "0"):
        one_error(cli("compare", str(exp), "--jobs", jobs, "--db", str(tmp_path / "r.sqlite")), "--jobs")
    assert not (tmp_path / "r.sqlite").exists()


def test_a_long_value_is_echoed_at_most_200_characters(cli, one_error):
    proc = cli("run", "--platform", "x" * 100_000, timeout=60)
    one_error(proc)
    assert len(proc.stderr) < 600, len(proc.stderr)


# --- 4. the Python API's types -------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: govlab.compare("e.toml", db=1.5),
        lambda: govlab.compare("e.toml", executor=1),
        lambda: govlab.compare("e.toml", jobs=10**30),
        lambda: govlab.compare("e.toml", progress="yes"),
        lambda: govlab.open_results(None),
        lambda: govlab.open_results("x.sqlite", experiment=1),
        lambda: govlab.reproduce({"bogus": 1}),
        lambda: govlab.reproduce(quick="yes"),
        lambda: govlab.Trace("t.txt", platform=1),
        lambda: govlab.list_governors(py=b"x"),
        lambda: govlab.list_governors(kernel=5.4),
        lambda: govlab.load_experiment(None),
        lambda: govlab.run(progress=1),
        lambda: govlab.trace.replay("t.txt", cpufreq=b"x"),
        lambda: govlab.trace.stats(None),
    ],
)
def test_a_wrong_type_is_a_govlab_error_and_a_type_or_value_error(call):
    with pytest.raises(govlab.GovlabError) as e:
        call()
    assert isinstance(e.value, (TypeError, ValueError)), type(e.value)


def test_wrong_types_and_ranges_say_which_argument(tmp_path):
    with pytest.raises(InvalidTypeError, match=r"^db: expected a file path"):
        govlab.compare("e.toml", db=1.5)
    with pytest.raises(TypeError):
        govlab.open_results(None)
    trace = tmp_path / "t.txt"
    trace.write_text(TRACE)
    t = govlab.Trace(trace)
    with pytest.raises(InvalidValueError, match=r"^max_spans: -1 is out of range"):
        t.timeline(max_spans=-1)
    assert len(t.timeline(max_spans=10)) > 0


def test_a_governor_file_that_exits_or_raises_at_import_is_an_error_naming_it(cli, one_error, tmp_path):
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    raises = tmp_path / "raises.py"
    raises.write_text("raise RuntimeError('no')\n")
    for path, what in ((exits, "sys.exit(0)"), (raises, "RuntimeError")):
        one_error(cli("list", "governors", "--py", str(path), timeout=60), str(path), what)
        one_error(cli("run", "--cpufreq", f"py:{path}:G", "--duration", "10ms", timeout=60), str(path), what)


# --- 5. deep experiment files --------------------------------------------------------


def test_a_deeply_nested_experiment_is_one_line(cli, one_error, tmp_path):
    exp = tmp_path / "deep.toml"
    exp.write_text("x = " + "[" * 10_000 + "]" * 10_000 + "\n")
    one_error(cli("compare", str(exp), timeout=60), "deep.toml", "nested too deeply")


# --- 6. limits before work in the readers ----------------------------------------------


@pytest.mark.parametrize(
    "op, must",
    [
        ('{ timer = "0us" }', "timer = 0 ns: shorter than 1 µs"),
        ('{ timer = "1ns" }', "timer = 1 ns: shorter than 1 µs"),
        ('{ sleep = "1ns" }', "sleep = 1 ns: shorter than 1 µs"),
        ('{ run = "1us", sleep = "1us" }', "'sleep' is not an option of the run op"),
        ('{ run = "1ms", dist = -1 }', "dist = -1: a string"),
        ('{ run = "1ms", mem = "x" }', 'mem = "x": a number'),
        ('{ run = "1ms", cv = "x" }', 'cv = "x": a number'),
        ('{ run = "1ms", cv = -1 }', "cv = -1: a coefficient of variation"),
        ('{ mark = "x" }, { run = "1ms" }', 'mark = "x"'),
        ('{ sleep = "1ms", since = -1 }', "'since' is not an option of the sleep op"),
    ],
)
def test_a_workload_file_op_out_of_range_or_of_the_wrong_type_is_refused(cli, one_error, tmp_path, op, must):
    f = tmp_path / "w.toml"
    f.write_text(f'[[task]]\ncomm = "t"\nloop = "forever"\nops = [ {op} ]\n')
    one_error(cli("run", "--workload", str(f), "--duration", "200ms", timeout=60), "w.toml:4", must)


def test_a_workload_file_timer_of_1us_still_runs(cli, tmp_path):
    f = tmp_path / "w.toml"
    f.write_text('[[task]]\ncomm = "t"\nloop = "forever"\nops = [ { timer = "1us" }, { run = "1us", dist = "exp", cv = 0.5 } ]\n')
    proc = cli("run", "--workload", str(f), "--duration", "5ms", timeout=120)
    assert proc.returncode == 0, proc.stderr


#: A thousand tasks each woken every microsecond: 10^9 events a simulated second.
TIMER_STORM = '[[task]]\ncomm = "t"\ninstances = {n}\nloop = "forever"\nops = [ {{ timer = "1us" }} ]\n'


def test_a_run_estimated_above_the_ceiling_is_refused_before_it_starts(cli, one_error, tmp_path):
    # issue 39: such a file ran for hours; now its cost is estimated first.
    f = tmp_path / "storm.toml"
    f.write_text(TIMER_STORM.format(n=1000))
    line = one_error(cli("run", "--workload", str(f), timeout=60), "storm.toml", "'duration'", "about 1.0e10 events")
    assert "at most 1s" in line and "--max-events" in line and "GOVLAB_MAX_EVENTS" in line, line


def test_the_ceiling_is_lowered_or_raised_by_option_or_environment(cli, one_error, tmp_path):
    f = tmp_path / "one.toml"
    f.write_text(TIMER_STORM.format(n=1))  # 5,000 events in 5 ms
    args = ["run", "--workload", str(f), "--duration", "5ms"]
    one_error(cli(*args, "--max-events", "1000", timeout=60), "about 5.0e3 events", "more than the 1e3")
    one_error(cli(*args, env={"GOVLAB_MAX_EVENTS": "1000"}, timeout=60), "about 5.0e3 events")
    assert cli(*args, "--max-events", "10000", env={"GOVLAB_MAX_EVENTS": "1000"}, timeout=60).returncode == 0
    assert cli(*args, env={"GOVLAB_MAX_EVENTS": "10000"}, timeout=60).returncode == 0
    one_error(cli(*args, env={"GOVLAB_MAX_EVENTS": "many"}, timeout=60), "GOVLAB_MAX_EVENTS", "'many'")
    one_error(cli(*args, "--max-events", "0", timeout=60), "--max-events")


def test_a_comparison_over_the_ceiling_is_refused_before_any_run(cli, one_error, tmp_path):
    f = tmp_path / "storm.toml"
    f.write_text(TIMER_STORM.format(n=1000))
    exp = tmp_path / "e.toml"
    exp.write_text(TINY.replace('workload = "periodic:tasks=2,run_us=1000,period_us=5000"', f'workload = "{f}"').replace('"50ms"', '"2s"'))
    db = tmp_path / "r.sqlite"
    one_error(cli("compare", str(exp), "--db", str(db), "--jobs", "1", timeout=60), "storm.toml", "--max-events")
    import sqlite3

    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_the_python_api_refuses_a_run_over_the_ceiling_and_checks_max_events(tmp_path, monkeypatch):
    f = tmp_path / "one.toml"
    f.write_text(TIMER_STORM.format(n=1))
    with pytest.raises(InvalidValueError, match="more than the 1e3"):
        govlab.run(workload=f, duration="5ms", max_events=1000)
    assert govlab.run(workload=f, duration="5ms", max_events=10_000).to_dict()["sim_time_ns"] == 5_000_000
    with pytest.raises(InvalidTypeError, match="^max_events"):
        govlab.run(workload=f, duration="5ms", max_events="1e4")
    monkeypatch.setenv("GOVLAB_MAX_EVENTS", "1000")
    with pytest.raises(InvalidValueError, match="GOVLAB_MAX_EVENTS"):
        govlab.run(workload=f, duration="5ms")


def test_an_rtapp_file_of_100000_phases_is_read(cli, tmp_path):
    # issue 39: each phase scanned every phase for `cpus`, quadratic in the
    # phases (20,000 took 2.8 s, 100,000 more than a minute). The timeout is
    # a guard against that, not a measurement (linear: well under a second).
    phases = ",\n".join(f'"p{i}": {{ "run": 100, "sleep": 100 }}' for i in range(100_000))
    f = tmp_path / "big.json"
    f.write_text('{ "tasks": { "t": { "loop": 1, "phases": {' + phases + "} } } }")
    proc = cli("run", "--workload", f"rtapp:file={f}", "--duration", "1ms", "--show-config", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_text_trace_with_zero_padding_is_refused_naming_the_byte(cli, one_error, tmp_path):
    f = tmp_path / "padded.txt"
    f.write_text(TRACE)
    with open(f, "ab") as out:
        out.truncate(len(TRACE) + 10_000_000)  # sparse zeros after the text
    proc = cli("trace", "stats", str(f), timeout=60)
    one_error(proc, "padded.txt", f"byte {len(TRACE)} is a NUL byte")
    assert "\x00" not in proc.stderr


#: The most memory reading a huge sparse trace may take (issue 39).
MAX_RSS_KIB = 200 * 1024


def _sparse_trace_dat(src: Path, dst: Path, size: int) -> None:
    """``src``, a trace.dat, as a sparse file of ``size`` bytes whose last CPU's ring-buffer pages run
    on through the holes to the end (zero pages: no events). trace.dat v6 ends its header with the
    CPU count (a u32 before the options or flyrecord label) and, after ``flyrecord\\0``, each CPU's
    data offset and size (u64 each)."""
    data = src.read_bytes()
    fly = data.index(b"flyrecord\0")
    options = data.find(b"options  \0")
    (cpus,) = struct.unpack_from("<I", data, (options if 0 <= options < fly else fly) - 4)
    table = fly + 10
    pairs = [struct.unpack_from("<QQ", data, table + 16 * i) for i in range(cpus)]
    last = max(range(cpus), key=lambda i: pairs[i][0])
    out = bytearray(data)
    struct.pack_into("<QQ", out, table + 16 * last, pairs[last][0], size - pairs[last][0])
    with open(dst, "wb") as f:
        f.write(out)
        f.truncate(size)


def test_a_1_gib_sparse_trace_dat_is_read_in_bounded_memory(cli_rss, tmp_path):
    # issue 39: the whole file was read into memory (1.06 GB RSS), then a
    # 512 MiB ceiling refused it; now the pages are streamed a block at a time.
    real = REPO / "data" / "real" / "lisa" / "sched_load" / "trace.dat"
    f = tmp_path / "huge.dat"
    _sparse_trace_dat(real, f, 1 << 30)
    proc, rss_kib = cli_rss("trace", "stats", str(f), "--format", "json", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert rss_kib < MAX_RSS_KIB, rss_kib
    # The same events as the file without its holes.
    plain = cli_rss("trace", "stats", str(real), "--format", "json")[0]
    assert json.loads(proc.stdout)["events"] == json.loads(plain.stdout)["events"]


def test_a_400_mb_sparse_trace_dat_under_the_old_ceiling_is_read_in_bounded_memory(cli_rss, tmp_path):
    # Under the old 512 MiB ceiling it was read whole: 400 MB of memory.
    f = tmp_path / "padded.dat"
    _sparse_trace_dat(REPO / "data" / "real" / "trappy" / "trace_idle.dat", f, 400 << 20)
    proc, rss_kib = cli_rss("trace", "stats", str(f), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert rss_kib < MAX_RSS_KIB, rss_kib


def test_a_400_mb_text_trace_of_zero_padding_is_refused_at_the_first_nul_in_bounded_memory(cli_rss, one_error, tmp_path):
    f = tmp_path / "padded.txt"
    f.write_text(TRACE)
    with open(f, "ab") as out:
        out.truncate(400 << 20)
    proc, rss_kib = cli_rss("trace", "stats", str(f), timeout=300)
    one_error(proc, "padded.txt", f"byte {len(TRACE)} is a NUL byte")
    assert rss_kib < MAX_RSS_KIB, rss_kib


@pytest.mark.parametrize(
    "size, head, must",
    [
        (1 << 30, b"\x17\x08\x44tracing", "unsupported trace.dat version"),  # the magic, then holes
        (5 << 30, b"\x17\x08\x44tracing", "more than the 4294967296 bytes"),
        (600 << 20, b"# tracer: nop\n", "more than the 536870912 bytes"),
    ],
    ids=["1-gib-after-the-magic", "5-gib-trace-dat", "600-mib-text"],
)
def test_huge_sparse_traces_are_refused_in_bounded_memory(cli_rss, one_error, tmp_path, size, head, must):
    f = tmp_path / "huge.trace"
    with open(f, "wb") as out:
        out.write(head)
        out.truncate(size)
    proc, rss_kib = cli_rss("trace", "stats", str(f), timeout=120)
    one_error(proc, "huge.trace", must)
    assert "\x00" not in proc.stderr  # issue 39: some 500 NUL bytes were echoed
    assert rss_kib < MAX_RSS_KIB, rss_kib


def test_a_long_list_of_valid_names_is_cut_to_fit_one_line(cli, one_error):
    # issue 39: the 45 turbostat columns of this machine made a 384-character line.
    line = one_error(cli("run", "--show", "nosuch", "--duration", "1ms", timeout=60), "'nosuch'", "Core, CPU, Avg_MHz")
    assert re.search(r", \.\.\. \(\d+ more\)\)$", line), line


def test_a_cut_list_says_how_many_more_and_where_to_see_them():
    from govlab.cli import MAX_MESSAGE_CHARS, _one_line

    names = [f"workload-{i}" for i in range(60)]
    line = _one_line(f"unknown workload 'x'; valid choices: {', '.join(names)}, PATH.toml (a workload file)")
    assert len("govlab: error: " + line) <= MAX_MESSAGE_CHARS, line
    kept = line.split("valid choices: ")[1].split(", ... ")[0].split(", ")
    assert kept == names[: len(kept)] and len(kept) >= 3
    assert line.endswith(f", ... ({61 - len(kept)} more; `govlab list workloads`)"), line
    short = "unknown workload 'x'; valid choices: a, b, c, d, PATH.toml (a workload file)"
    assert _one_line(short) == short


def test_a_stored_result_that_is_not_json_names_the_database_the_table_and_the_run(cli, one_error, results, tmp_path):
    import shutil
    import sqlite3

    _, db = results
    copy = tmp_path / "bad.sqlite"
    shutil.copy(db, copy)
    with sqlite3.connect(copy) as con:
        (key,) = con.execute("SELECT key FROM runs LIMIT 1").fetchone()
        con.execute("UPDATE runs SET result = '{x' WHERE key = ?", (key,))
    proc = cli("report", str(copy))
    one_error(proc, "bad.sqlite", "table runs", f"run {key[:16]}", "not valid JSON")
    assert len(proc.stderr.strip()) <= 300, proc.stderr


def test_the_python_api_refuses_a_trace_over_the_platform_file_and_an_empty_trace(tmp_path):
    platform = tmp_path / "P.toml"
    platform.write_bytes(PLATFORM.read_bytes())
    before = platform.read_bytes()
    with pytest.raises(govlab.GovlabError, match="same file"):
        govlab.run(platform=platform, trace=platform, duration="5ms")
    assert platform.read_bytes() == before
    with pytest.raises(InvalidValueError, match="trace: the file path is empty"):
        govlab.run(trace="", duration="5ms")


def test_notebook_compare_refuses_the_experiment_file_as_its_database(tmp_path):
    exp = tmp_path / "e.toml"
    exp.write_text(TINY)
    with pytest.raises(govlab.GovlabError, match="same file"):
        govlab.compare(exp, db=exp, progress=False)
    assert exp.read_text() == TINY
