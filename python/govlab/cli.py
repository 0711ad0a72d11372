"""The ``govlab`` command: thin handlers over the pipeline, one per subcommand.

Each handler checks its options, loads
(:mod:`govlab.experiment`), runs :func:`govlab.pipeline.run_experiments`
through one shared step (:func:`_execute`: run, store, progress, Ctrl-C,
the summary line) and renders (:mod:`govlab.tables`, :mod:`govlab.run_text`,
:mod:`govlab.report`). ``compare`` and ``reproduce`` share that step and the
HTML report's writing.

    govlab run  [--platform SPEC] [--kernel VERSION] [--workload SPEC] [--cpufreq SPEC] [--cpuidle SPEC]
                [--duration TIME] [--seed N] [--format text|json] [--trace FILE]
                [--turbostat] [--interval TIME [--plot FILE.html]] [--show COLUMNS] [--hide COLUMNS] [--show-config]
    govlab list platforms|kernels|workloads|governors [--py FILE.py[:CLASS]]...
    govlab compare EXPERIMENT.toml... [--db FILE] [--format text|markdown|csv|json]
                [--jobs N | --executor local|dask://HOST:PORT]
                [--html FILE [--timeline CONFIG] [--timeline-value VALUE]]
    govlab report DB [--experiment NAME]... [--format text|markdown|csv|json] [--html FILE]
    govlab reproduce [NAME...] [--quick] [--db FILE] [--format text|json] [--jobs N] [--html FILE]
    govlab trace stats FILE [--platform SPEC] [--format text|json] [--html OUT]
    govlab trace replay FILE [--platform SPEC] [--kernel VERSION] [--cpufreq SPEC] [--cpuidle SPEC] [--seed N] [--pin]
                [--timed-wakeups] [--format text|json]

Exit status: 0 on success; 2 on bad input (argparse's own message for a bad
option, ``govlab: error: ...`` for anything the engine or our own checks
reject); 130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM, which
stops a command as Ctrl-C does: finished runs stay stored). Output is built completely before anything is
written to stdout, so a failed run writes nothing there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from govlab._core import __version__

from govlab import api, fmt
from govlab.exceptions import GovernorError, GovlabError, file_error
from govlab.run_text import format_kernels, format_list, format_replay, format_stats, format_text

__all__ = ["main", "format_text", "format_list"]

#: Wall seconds a run must last before its progress bar appears.
PROGRESS_DELAY_S = 2.0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(_negative_values(sys.argv[1:] if argv is None else list(argv)))
    except SystemExit as e:  # argparse printed its message (or --help, --version)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    previous = _handle_sigterm()
    try:
        _refuse_empty(args)
        out = args.handler(args)
    except Terminated:
        print("govlab: terminated (SIGTERM)", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("govlab: interrupted", file=sys.stderr)
        return 130
    except GovernorError as e:  # a user's governor failed: its traceback follows the line (several lines)
        print(f"govlab: error: {e}", file=sys.stderr)
        return 2
    except (GovlabError, OSError, ValueError) as e:
        if isinstance(e, OSError) and not isinstance(e, GovlabError) and e.errno is not None:
            e = file_error(e.errno, e.strerror, e.filename)  # FILE: reason, as the notebook API says it
        print(f"govlab: error: {_one_line(str(e) or type(e).__name__)}", file=sys.stderr)
        return 2
    except sqlite3.Error as e:  # a results database that went bad while in use
        db = getattr(args, "db", None)
        where = f"the results database {db}" if db else "the results database"
        print(f"govlab: error: {_one_line(f'{where} cannot be used: {e}')}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return _write(out)


#: The most characters of an error line. It is brought under by cutting its
#: longest words (echoed values, paths), none below MIN_WORD_CHARS, then its
#: lists of valid names to their first names.
MAX_MESSAGE_CHARS = 300
MIN_WORD_CHARS = 40
#: Names a cut list keeps at least.
MIN_LIST_NAMES = 3

#: A list of names in a message ("valid keys: a, b, c", "expected one of `a`, `b`"): four or more
#: words without spaces (each perhaps with a note in parentheses), commas between.
_NAMES = re.compile(r"(?:[^\s,;()]+(?: \([^()]*\))?, ){3,}[^\s,;()]+(?: \([^()]*\))?")
#: The `govlab list` kind that lists a message's names, by the first of these words it says.
_LIST_KINDS = {"platform": "platforms", "workload": "workloads", "kernel": "kernels", "governor": "governors", "cpufreq": "governors", "cpuidle": "governors"}


def _one_line(message: str, prefix: str = "govlab: error: ") -> str:
    """``message`` on one line of at most MAX_MESSAGE_CHARS: control characters escaped, each word
    (an echoed value) cut at :data:`govlab.fmt.MAX_SHOWN_CHARS`, then the longest cut further while
    the line is too long, then its lists of names (:func:`_cut_lists`), and last its middle."""
    words = ["".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in w) for w in message.split(" ")]
    words = [fmt.clip(w) for w in words]
    excess = len(prefix) + len(" ".join(words)) - MAX_MESSAGE_CHARS
    while excess > 0:
        i = max(range(len(words)), key=lambda k: len(words[k]))
        if len(words[i]) <= MIN_WORD_CHARS:
            break
        keep = max(MIN_WORD_CHARS, len(words[i]) - excess)
        excess -= len(words[i]) - keep
        words[i] = fmt.clip(words[i], keep)
    line = _cut_lists(" ".join(words), MAX_MESSAGE_CHARS - len(prefix))
    # Whatever is still too long (prose around echoed text) ends there.
    return fmt.clip(line, MAX_MESSAGE_CHARS - len(prefix)) if len(line) > MAX_MESSAGE_CHARS - len(prefix) else line


def _cut_lists(line: str, most: int) -> str:
    """``line`` with its longest list of names cut to its first names while the line is over
    ``most`` characters: "valid choices: a, b, c, ... (12 more; `govlab list workloads`)"."""
    cut_at: set[int] = set()
    while len(line) > most:
        lists = [m for m in _NAMES.finditer(line) if m.start() not in cut_at]
        if not lists:
            return line
        m = max(lists, key=lambda m: len(m.group()))
        names = m.group().split(", ")
        kind = re.search(r"\b(" + "|".join(_LIST_KINDS) + r")\b", line[: m.start()])
        where = f"; `govlab list {_LIST_KINDS[kind.group(1)]}`" if kind else ""
        for keep in range(len(names) - 1, MIN_LIST_NAMES - 1, -1):
            cut = f"{', '.join(names[:keep])}, ... ({len(names) - keep} more{where})"
            if len(line) - len(m.group()) + len(cut) <= most:
                break
        cut_at.add(m.start())
        line = line[: m.start()] + cut + line[m.end() :]
    return line


#: The positional arguments, by their attribute: how the usage line names them.
_POSITIONAL = {"file": "FILE", "name": "NAME", "names": "NAME", "experiments": "EXPERIMENT.toml", "kind": "KIND"}


def _refuse_empty(args: argparse.Namespace) -> None:
    """An empty or blank value is a mistake (`--html ""` from an unset shell variable), never "not given"."""
    for key, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            positional = {**_POSITIONAL, **({"db": "DB"} if args.command == "report" else {})}
            name = positional.get(key, "--" + key.replace("_", "-"))
            raise ValueError(f"{name}: the value is empty; give a value or leave the option out")


#: Options whose value may start with "-" (argparse takes "-1s" for an option).
_SIGNED_OPTIONS = ("--duration", "--seed", "--turbostat-interval", "--interval")


def _negative_values(argv: list[str]) -> list[str]:
    """``--duration -1s`` as ``--duration=-1s``, so the engine says what is wrong with it."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in _SIGNED_OPTIONS and i + 1 < len(argv) and argv[i + 1][1:2] in "0123456789." and argv[i + 1][:1] == "-":
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be, so that it stops a command the same way."""


def _handle_sigterm() -> Any:
    """Make SIGTERM raise :class:`Terminated` (in the main thread only); returns the handler it replaced."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def terminate(_signum: int, _frame: Any) -> None:
        raise Terminated

    return signal.signal(signal.SIGTERM, terminate)


# --- commands ----------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> str:
    config = {
        "platform": args.platform,
        "kernel": args.kernel,
        "workload": args.workload,
        "cpufreq": args.cpufreq,
        "cpuidle": args.cpuidle,
        "duration": args.duration,
        "seed": args.seed,
    }
    if args.show_config:
        return json.dumps(api.show_config(**config), indent=2) + "\n"
    from govlab import outfile, spec

    outfile.refuse_inputs(
        [("--trace", args.trace), ("--plot", args.plot)],
        [(f"--{k}", f) for k in ("platform", "workload", "cpufreq", "cpuidle") for f in spec.files(getattr(args, k))],
    )
    trace_path = None
    if args.trace:
        trace_path = outfile.check(args.trace, "trace")
        _warn_trace_size(config)
    plot_path = None
    if args.plot:
        if args.turbostat_interval is None:
            raise GovlabError("--plot draws the turbostat intervals: give --turbostat-interval TIME too")
        plot_path = outfile.check(args.plot, "plot")
    if args.duration is not None:
        _note_duration_override(config)
    extra = {} if args.turbostat_interval is None else {"turbostat_interval": args.turbostat_interval}
    if args.max_events is not None:
        _check_max_events(args.max_events)
        extra["max_events"] = args.max_events
    progress = _ProgressBar() if sys.stderr.isatty() else None
    try:
        result = api.run(**config, trace=trace_path, progress=progress, **extra)
    finally:
        if progress is not None:
            progress.close()
    if plot_path is not None:
        from govlab.report import turbostat_page

        turbostat_page.write_html(plot_path, result.to_dict())
        print(f"govlab: wrote the turbostat plot to {args.plot}", file=sys.stderr)
    turbostat = args.turbostat or args.turbostat_interval is not None or args.show is not None or args.hide is not None
    if turbostat:
        from govlab.turbostat import columns, select_columns

        cols = select_columns(columns(result.to_dict()), args.show, args.hide)
    if args.format == "json":
        d = result.to_dict()
        if turbostat:
            d["turbostat"] = [{c: r[c] for c in cols if c in r} for r in result.turbostat()]
        if args.turbostat_interval is not None:
            d["turbostat_intervals"] = [
                {**iv, "rows": [{c: r[c] for c in cols if c in r} for r in iv["rows"]]} for iv in result.turbostat_intervals()
            ]
        return json.dumps(d, indent=2, sort_keys=False) + "\n"
    if not turbostat:
        return format_text(result)
    # As turbostat prints it: its table alone on stdout (tab-separated, for a pipe or
    # pandas.read_csv(sep="\t")), the run's summary on stderr.
    print(format_text(result), file=sys.stderr)
    if args.turbostat_interval is not None:
        from govlab.run_text import format_turbostat_intervals

        return format_turbostat_intervals(result.turbostat_intervals(), cols)
    from govlab.run_text import format_turbostat

    return format_turbostat(result.turbostat(), cols)


def _note_duration_override(config: dict[str, Any]) -> None:
    """One line on stderr when --duration replaces the run length the workload asks for (an rt-app file's global.duration, fio's runtime)."""
    workload = str(config.get("workload") or "")
    if workload.startswith("rtapp"):
        what = "the rt-app file's global.duration"
    elif workload.startswith("fio"):
        what = "fio's runtime (plus 1 s for the last completions)"
    else:
        return
    resolved = api.show_config(**config)
    own = resolved.get("workload_duration_ns")
    if own is not None and own != resolved["duration_ns"]:
        print(f"govlab: note: --duration {config['duration']} overrides {what} ({own / 1e9:g} s)", file=sys.stderr)


#: Trace events per CPU per simulated second of a busy run, measured on
#: skylake-e3-1240v5 (ycsb-redis: 14,400; periodic with 8 tasks at 20%: 10,000;
#: an idle machine: 30), and the bytes of one event line (127 to 160).
TRACE_EVENTS_PER_CPU_S = 15_000
TRACE_BYTES_PER_EVENT = 140
#: `run --trace` warns when its estimate is above this many bytes.
TRACE_WARN_BYTES = 500_000_000


def _warn_trace_size(config: dict[str, Any]) -> None:
    """One line on stderr when the trace of this run may be large (the estimate for a busy workload)."""
    resolved = api.show_config(**config)
    cpus = int(resolved["platform"]["cpus"])
    seconds = resolved["duration_ns"] / 1e9
    estimate = seconds * cpus * TRACE_EVENTS_PER_CPU_S * TRACE_BYTES_PER_EVENT
    if estimate > TRACE_WARN_BYTES:
        print(
            f"govlab: warning: the trace of {seconds:g} s on {cpus} CPUs may reach about {estimate / 1e9:.1f} GB "
            f"(a busy workload writes about {TRACE_EVENTS_PER_CPU_S * TRACE_BYTES_PER_EVENT / 1e6:.0f} MB per CPU "
            "per simulated second); a shorter --duration makes it smaller",
            file=sys.stderr,
        )


def _cmd_list(args: argparse.Namespace) -> str:
    if args.py and args.kind != "governors":
        raise ValueError("--py lists governors written in Python: govlab list governors --py FILE.py[:CLASS]")
    if args.kernel is not None and args.kind != "governors":
        raise ValueError(f"--kernel lists governors as in a kernel version: govlab list governors --kernel VERSION (not list {args.kind})")
    listing: dict[str, Callable[[], Any]] = {
        "platforms": api.list_platforms,
        "kernels": api.list_kernels,
        "workloads": api.list_workloads,
        "governors": lambda: api.list_governors(py=args.py, kernel=args.kernel),
    }
    if args.kind == "kernels":
        return format_kernels(api.list_kernels())
    return format_list(listing[args.kind]())


def _cmd_compare(args: argparse.Namespace) -> str:
    from govlab import experiment, sweep, tables
    from govlab.store import DEFAULT_DB_NAME, Store

    experiments = [e for path in args.experiments for e in experiment.load_all(path)]
    db = args.db or os.path.join(os.path.dirname(os.path.abspath(args.experiments[0])), DEFAULT_DB_NAME)
    _check_jobs(args.jobs)
    _check_max_events(args.max_events)
    executor = sweep.parse_executor(args.executor)
    if args.jobs is not None and executor != sweep.LOCAL:
        raise ValueError("--jobs applies to --executor local; a Dask cluster runs as many runs as its workers have threads")
    if (args.timeline or args.timeline_value) and not args.html:
        raise ValueError("--timeline and --timeline-value choose the run the HTML report shows; they need --html FILE")
    from govlab import outfile

    outfile.refuse_inputs([("--db", db), ("--html", args.html)], _experiment_inputs(args.experiments, experiments))
    outfile.check(db, "results database")
    if args.html:
        from govlab import report as html_report

        outfile.check(args.html, "HTML report")
        html_report.timeline_pick(experiments[0].to_dict(), args.timeline, args.timeline_value)
    with Store(db) as store:
        done = _execute(experiments, store, db, args.jobs, executor, max_events=args.max_events)
        if args.html:
            _write_run_report(args.html, store, db, done.analyses, done, args.timeline, args.timeline_value)
    return tables.render(done.analyses, args.format)


def _experiment_inputs(paths: Sequence[str], experiments: Sequence[Any]) -> list[tuple[str, str]]:
    """The files a comparison reads: its experiment files, and the platform,
    workload and governor files they name."""
    from govlab import spec

    inputs = [("EXPERIMENT.toml", p) for p in paths]
    for e in experiments:
        d = e.to_dict()
        specs = [d.get("platform"), d.get("workload")]
        for c in d.get("configs", []):
            specs += [c.get("cpufreq"), c.get("cpuidle")]
        inputs += [(f"a file {e.name} reads", f) for s in specs for f in spec.files(s)]
    return inputs


def _cmd_reproduce(args: argparse.Namespace) -> str:
    from govlab import pipeline, reproduction as reproduce
    from govlab.store import Store

    names = args.names or list(reproduce.EVALUATIONS)
    evaluations = [reproduce.evaluation(n) for n in dict.fromkeys(names)]
    loaded = [(ev, reproduce.experiments_of(ev, quick=args.quick)) for ev in evaluations]
    _check_jobs(args.jobs)
    _check_max_events(args.max_events)
    db = args.db or reproduce.default_db()
    from govlab import outfile

    inputs = [(f"{ev.name}'s {what} file", str(f)) for ev in evaluations for what, f in (("experiment", ev.experiment_file), ("published", ev.published_file))]
    outfile.refuse_inputs([("--db", db), ("--html", args.html)], inputs)
    outfile.check(db, "results database")
    if args.html:
        outfile.check(args.html, "HTML report")
    texts: list[str] = []
    documents: list[dict[str, Any]] = []
    every_analysis: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    first = None
    with Store(db) as store:
        # Every evaluation's runs in one sweep, so the workers stay busy from the first run to
        # the last instead of waiting at the end of each evaluation for its longest run.
        label = f"{loaded[0][0].name}: " if len(loaded) == 1 else f"{len(loaded)} evaluations: "
        every = _execute([x for _, experiments in loaded for x in experiments], store, db, args.jobs, label=label, max_events=args.max_events)
        at = 0
        for ev, experiments in loaded:
            n = len(experiments)
            done = pipeline.Executed(every.experiments[at:at + n], every.planned[at:at + n], every.analyses[at:at + n], every.report, every.loaded)
            at += n
            first = first or done
            table = reproduce.rows(ev, done.experiments, done.planned, done.results(store))
            verdicts.append(reproduce.verdict_table(ev, table))
            every_analysis += done.analyses
            if args.format == "json":
                documents.append({"experiment": ev.name, "quick": args.quick, "rows": fmt.finite(table)})
            else:
                texts.append(reproduce.section_text(ev, done.analyses, table, args.quick))
        if args.html and first is not None:
            title = f"govlab reproduce: {', '.join(ev.name for ev, _ in loaded)}" + (" (quick)" if args.quick else "")
            _write_run_report(args.html, store, db, every_analysis, first, None, None, title=title, verdicts=verdicts)
    if args.format == "json":
        return json.dumps(documents[0] if len(args.names) == 1 else documents, indent=1, allow_nan=False) + "\n"
    return "\n".join(texts)


def _check_max_events(value: int | None) -> None:
    if value is not None and not 1 <= value < 2**64:
        raise ValueError(f"--max-events must be from 1 to 2^64-1, got {fmt.clip(str(value))}")


def _check_jobs(jobs: int | None) -> None:
    from govlab.sweep import MAX_JOBS

    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"--jobs must be from 1 to {MAX_JOBS}, got {fmt.clip(str(jobs))}")


def _execute(
    experiments: Sequence[Any],
    store: Any,
    db: str,
    jobs: int | None,
    executor: str = "local",
    label: str = "",
    max_events: int | None = None,
) -> Any:
    """Plan, run, store and analyse ``experiments`` (:func:`govlab.pipeline.run_experiments`), saying so on stderr.

    On Ctrl-C or SIGTERM, says that the finished runs are stored, then re-raises.
    """
    from govlab import pipeline

    try:
        done = pipeline.run_experiments(experiments, store, jobs=jobs, executor=executor, max_events=max_events)
    except KeyboardInterrupt as e:
        why = "terminated" if isinstance(e, Terminated) else "interrupted"
        print(f"govlab: {why}; finished runs are stored in {db}; run the same command again to resume", file=sys.stderr)
        raise
    report = done.report
    print(
        f"govlab: {label}{report.total} runs: {report.stored} found in {db}, {report.simulated} simulated "
        f"({report.wall_s:.1f} s)",
        file=sys.stderr,
    )
    _warn_constant(done.analyses)
    return done


def _warn_constant(analyses: Sequence[Any]) -> None:
    """One stderr line per benchmark naming the configurations whose repeats are all identical:
    the seed does not reach them."""
    for a in analyses:
        where = a.get("constant_configs", [])
        if where:
            print(
                f"govlab: warning: {a['name']}: every repeat gives the same {a['metric']['name']} for "
                f"{'; '.join(where)}: the seed does not reach this workload, so its repeats add nothing",
                file=sys.stderr,
            )


def _write_run_report(
    path: str,
    store: Any,
    db: str,
    analyses: Sequence[Any],
    done: Any,
    config: str | None,
    value: str | None,
    title: str | None = None,
    verdicts: Sequence[Any] = (),
) -> None:
    """The HTML report of ``analyses``, with the timeline of a run of ``done``'s first experiment."""
    from govlab import report as html_report

    timeline = html_report.record_timeline(store, done.experiments[0], done.planned[0], config, value)
    page = html_report.render(analyses, html_report.cells(store, analyses), timeline, source=db, title=title, verdicts=verdicts)
    _write_html(path, page)


def _cmd_report(args: argparse.Namespace) -> str:
    from govlab import analysis as compare, tables
    from govlab.store import Store

    from govlab import outfile

    outfile.refuse_inputs([("--html", args.html)], [("DB", args.db)])
    if args.html:
        outfile.check(args.html, "HTML report")
    with Store(args.db, create=False) as store:
        analyses = compare.from_store(store, args.experiment)
        if args.html:
            from govlab import report as html_report

            timeline = html_report.stored_timeline(store, analyses)
            missing = (
                "No timeline is stored for these runs: `govlab compare EXPERIMENT.toml "
                f"--db {args.db} --html FILE` records one (it simulates that one run again with a trace)."
            )
            if timeline is None:
                print(f"govlab: {missing}", file=sys.stderr)
            page = html_report.render(
                analyses, html_report.cells(store, analyses), timeline, source=args.db, timeline_missing=missing
            )
            _write_html(args.html, page)
    _warn_constant(analyses)
    for a in analyses:
        if a["missing_runs"]:
            print(
                f"govlab: {a['name']}: {a['missing_runs']} of {a['runs']} runs are not in {args.db}; "
                "`govlab compare` runs them",
                file=sys.stderr,
            )
    return tables.render(analyses, args.format)


def _write_html(path: str, page: str) -> None:
    from govlab import report as html_report

    html_report.write(path, page)
    print(f"govlab: wrote the HTML report to {path}", file=sys.stderr)


def _cmd_trace_stats(args: argparse.Namespace) -> str:
    from govlab import trace
    from govlab.report import trace_page

    from govlab import outfile, spec

    outfile.refuse_inputs([("--html", args.html)], [("FILE", args.file), *(("--platform", f) for f in spec.files(args.platform))])
    if args.html:
        outfile.check(args.html, "HTML report")
        stats = trace_page.write_html(args.file, args.html, args.platform)
        print(f"govlab: wrote the HTML page to {args.html}", file=sys.stderr)
    else:
        stats = trace.stats(args.file, args.platform)
    if args.format == "json":
        return json.dumps(stats, indent=2) + "\n"
    return format_stats(stats)


def _cmd_trace_replay(args: argparse.Namespace) -> str:
    from govlab import trace

    progress = _ProgressBar() if sys.stderr.isatty() else None
    try:
        result, recorded, tasks = trace.replay(
            args.file,
            args.platform,
            args.cpufreq,
            args.cpuidle,
            args.seed,
            args.pin,
            progress,
            args.timed_wakeups,
            kernel=args.kernel,
        )
    finally:
        if progress is not None:
            progress.close()
    if args.format == "json":
        return json.dumps({"run": result.to_dict(), "recorded": recorded, "tasks": tasks}, indent=2) + "\n"
    return f"{tasks} tasks replayed\n" + format_text(result) + "\n" + format_replay(result, recorded)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its error line cut as ours are (a 100 kB argument is not echoed whole)."""

    def error(self, message: str) -> Any:
        super().error(_one_line(message, f"{self.prog}: error: "))


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="govlab",
        description="A laboratory for Linux cpufreq and cpuidle governors.",
    )
    parser.add_argument("--version", action="version", version=f"govlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="simulate a workload on a platform under a cpufreq and a cpuidle governor",
        description="Simulate a workload on a platform under a cpufreq and a cpuidle "
        "governor. Each of --platform, --workload, --cpufreq and --cpuidle takes "
        "NAME[:key=value,...]; `govlab list` shows the names, settings and defaults. "
        "A governor written in Python is py:FILE.py:CLASS[:key=value,...] (see govlab.governors).",
    )
    spec = "NAME[:k=v,...]"
    run.add_argument(
        "--platform",
        default=api.DEFAULT_PLATFORM,
        metavar=spec,
        help="a built-in platform, or the path of a platform TOML file (default: %(default)s)",
    )
    run.add_argument(
        "--kernel",
        default=None,
        metavar="VERSION[:k=v,...]",
        help="the mainline kernel version modelled, with options (idle_tick, hz, freq_invariance, housekeeping, rcu_tick, kpath, sched_energy_aware, lisa_module); "
        "a version between two supported ones runs the older one's semantics (default: the newest, "
        "see `govlab list kernels`)",
    )
    run.add_argument("--workload", default=api.DEFAULT_WORKLOAD, metavar=spec, help="(default: %(default)s)")
    run.add_argument(
        "--cpufreq",
        default=api.DEFAULT_CPUFREQ,
        metavar=spec,
        help="(default: the platform's, what its kernel runs: powersave, intel_pstate's own policy, "
        f"on intel_pstate with HWP ({api.DEFAULT_PLATFORM}: {api.defaults()['cpufreq']}) or before v5.8; ondemand on powernv; "
        "schedutil elsewhere, intel_pstate without HWP from v5.8 included; `govlab list platforms` shows each). "
        "On intel_pstate, powersave and performance "
        "are intel_pstate's own policies; ondemand, conservative, schedutil and userspace run it in passive mode",
    )
    run.add_argument("--cpuidle", default=api.DEFAULT_CPUIDLE, metavar=spec, help="(default: %(default)s)")
    run.add_argument(
        "--duration",
        default=api.DEFAULT_DURATION,
        metavar="TIME",
        help="simulated time with its unit, such as 10s, 250ms, 500us, 100ns (default: the workload's: an rt-app file's global.duration, fio's runtime plus 1s; 10s for one that runs "
        "until the duration, long enough for the defaults of one that ends by itself; see `govlab list workloads`)",
    )
    run.add_argument("--seed", type=int, default=api.DEFAULT_SEED, metavar="N", help="(default: %(default)s)")
    run.add_argument("--format", choices=("text", "json"), default="text", help="(default: %(default)s)")
    run.add_argument(
        "--trace",
        metavar="FILE",
        help="write every scheduler, frequency and idle event to FILE as ftrace text",
    )
    run.add_argument(
        "--turbostat",
        action="store_true",
        help="print the run as turbostat would, tab-separated on stdout as turbostat prints it (its columns for the "
        "platform's CPU model: Avg_MHz, Busy%%, Bzy_MHz, per idle state usage and %%, CPU%%cN, Pkg%%pcN, PkgWatt, CorWatt, "
        "RAMWatt, PKG_%%, UncMHz, ...), summary row first, then per CPU; the run's summary goes to stderr",
    )
    run.add_argument(
        "--turbostat-interval",
        "--interval",
        dest="turbostat_interval",
        metavar="TIME",
        help="turbostat's --interval: one table per interval of TIME, such as 1s, 250ms; implies --turbostat "
        "(in --format json: turbostat_intervals, and the engine's counters as intervals)",
    )
    run.add_argument(
        "--show",
        metavar="COLUMNS",
        help="turbostat's --show: only these comma-separated columns or groups (topology, frequency, idle, power, "
        "other, sysfs, all); implies --turbostat",
    )
    run.add_argument(
        "--hide",
        metavar="COLUMNS",
        help="turbostat's --hide: all columns but these (names or groups as for --show); implies --turbostat",
    )
    run.add_argument(
        "--plot",
        metavar="FILE.html",
        help="with --turbostat-interval: also write an HTML page plotting PkgWatt, RAMWatt and Busy%% over time to FILE.html",
    )
    run.add_argument(
    "--max-events",
        type=int,
        metavar="N",
        help="run even when a run is estimated to take more than N ops (default: $GOVLAB_MAX_EVENTS, else 10^9: "
        "minutes of wall time; the estimate and the ceiling are in docs/workloads.md)",
    )
    run.add_argument(
        "--show-config",
        action="store_true",
        help="print the resolved configuration (every tunable and its value) and exit without running",
    )
    run.set_defaults(handler=_cmd_run)

    listing = commands.add_parser(
        "list",
        help="list platforms, kernels, workloads or governors with their settings and defaults",
    )
    listing.add_argument("kind", choices=("platforms", "kernels", "workloads", "governors"))
    listing.add_argument(
        "--py",
        action="append",
        metavar="FILE.py[:CLASS]",
        help="also list the governors written in Python in FILE.py (or its class CLASS); may be repeated",
    )
    listing.add_argument(
        "--kernel",
        metavar="VERSION[:option=value,...]",
        help="governors only: list them as in this kernel version (which it has, how each differs, "
        "each tunable's default there, and whether a patch tunable is mainline or a patch on top)",
    )
    listing.set_defaults(handler=_cmd_list)

    formats = ("text", "markdown", "csv", "json")
    comp = commands.add_parser(
        "compare",
        help="run experiments (configurations x parameter values x repeats) and print MMTests-style tables",
        description="Run every configuration x parameter value x repeat of each experiment file "
        "that the results database does not hold yet, on all local cores, then print the "
        "comparison: MMTests-style tables against the baseline (positive percentages are "
        "improvements, *x%* marks a significant difference: Welch's t-test, p < 0.05), "
        "energy, power and performance-per-watt, and a summary when there are several benchmarks.",
    )
    comp.add_argument("experiments", nargs="+", metavar="EXPERIMENT.toml", help="experiment files")
    comp.add_argument(
        "--db",
        metavar="FILE",
        help="results database (SQLite; default: govlab-results.sqlite beside the first experiment)",
    )
    comp.add_argument("--format", choices=formats, default="text", help="(default: %(default)s)")
    comp.add_argument(
        "--jobs", type=int, metavar="N", help="simulations in parallel, local executor (default: the number of CPUs)"
    )
    comp.add_argument(
        "--executor",
        default="local",
        metavar="local|dask://HOST:PORT",
        help="where runs are simulated: a local process pool, or the Dask distributed scheduler "
        "at HOST:PORT; results are stored here as they arrive (default: %(default)s)",
    )
    comp.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained HTML report with the tables and interactive plots to FILE",
    )
    comp.add_argument(
        "--timeline",
        metavar="CONFIG",
        help="the configuration whose run the report's per-CPU timeline shows (default: the baseline)",
    )
    comp.add_argument(
        "--timeline-value",
        metavar="VALUE",
        help="the axis value of that run (default: the last); the first experiment's first seed is shown",
    )
    comp.add_argument(
    "--max-events",
        type=int,
        metavar="N",
        help="run even when a run is estimated to take more than N ops (default: $GOVLAB_MAX_EVENTS, else 10^9: "
        "minutes of wall time; the estimate and the ceiling are in docs/workloads.md)",
    )
    comp.set_defaults(handler=_cmd_compare)

    rep = commands.add_parser(
        "report",
        help="print the comparison tables again from a results database, without simulating",
    )
    rep.add_argument("db", metavar="DB", help="a results database written by `govlab compare`")
    rep.add_argument(
        "--experiment",
        action="append",
        metavar="NAME",
        help="only this experiment (repeatable; default: every experiment in the database)",
    )
    rep.add_argument("--format", choices=formats, default="text", help="(default: %(default)s)")
    rep.add_argument(
        "--html",
        metavar="FILE",
        help="also write the HTML report (tables, plots, and the timeline if one is stored) to FILE",
    )
    rep.set_defaults(handler=_cmd_report)

    from govlab.reproduction import EVALUATIONS

    repro = commands.add_parser(
        "reproduce",
        help="re-run the published governor evaluations and check govlab against their results",
        description="Run some or all of the published evaluations (experiments/NAME.toml) through "
        "`compare`, then print govlab's figures beside the published ones where the original "
        "post's figures are kept (data/published/), with a verdict per row: same direction "
        "of the difference to the baseline, and magnitude within a factor of two. "
        f"Evaluations: {', '.join(EVALUATIONS)}.",
    )
    repro.add_argument("names", nargs="*", metavar="NAME", help="evaluations to run (default: all, in the order above)")
    repro.add_argument(
        "--quick",
        action="store_true",
        help="a reduced version: fewer parameter values and repeats, shorter runs; still every headline row",
    )
    repro.add_argument(
        "--db", metavar="FILE", help="results database (SQLite; default: govlab-reproduce.sqlite here)"
    )
    repro.add_argument("--format", choices=("text", "json"), default="text", help="(default: %(default)s)")
    repro.add_argument("--jobs", type=int, metavar="N", help="simulations in parallel (default: the number of CPUs)")
    repro.add_argument("--html", metavar="FILE", help="also write the HTML report of the runs to FILE")
    repro.add_argument(
        "--max-events",
        type=int,
        metavar="N",
        help="run even when a run is estimated to take more than N ops (default: $GOVLAB_MAX_EVENTS, else 10^9)",
    )
    repro.set_defaults(handler=_cmd_reproduce)

    tr = commands.add_parser("trace", help="analyse a real trace (ftrace text, trace-cmd report, systrace, trace.dat)")
    trace_commands = tr.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    ts = trace_commands.add_parser(
        "stats",
        help="per CPU: time in each frequency and idle state, idle periods, wakeups, busy %%, idle-governor accuracy",
        description="Read FILE (raw ftrace text, trace-cmd report text, Android systrace HTML or "
        "trace-cmd trace.dat v6) and print per CPU the time at each frequency and in each idle "
        "state, idle-state usage, the idle periods' lengths, wakeups per second, the busy "
        "percentage, and how often the idle state chosen was correct, too deep or too shallow "
        "for the idle period that followed, against the oracle.",
    )
    ts.add_argument("file", metavar="FILE", help="the trace")
    ts.add_argument(
        "--platform",
        metavar=spec,
        help="take the idle states' target residencies from this platform (default: the platform a govlab "
        "trace's header records, else Arm Juno r0's; the output says which)",
    )
    ts.add_argument("--format", choices=("text", "json"), default="text", help="(default: %(default)s)")
    ts.add_argument(
        "--html",
        metavar="OUT",
        help="also write a self-contained HTML page with these tables and a per-CPU timeline of frequency and idle state to OUT",
    )
    ts.set_defaults(handler=_cmd_trace_stats)

    rp = trace_commands.add_parser(
        "replay",
        help="re-simulate a trace's tasks under chosen governors on a chosen platform",
        description="Rebuild each task of FILE as the trace shows it (running bursts as work at the "
        "frequency they ran at; a sleep another task ended as a wait for that task to get there, "
        "other sleeps timed) and simulate them for the trace's span; "
        "print the run as `govlab run` does and, per CPU, the recording beside the replay.",
    )
    rp.add_argument("file", metavar="FILE", help="the trace")
    rp.add_argument(
        "--platform",
        metavar=spec,
        help=f"(default: the platform a govlab trace's header records, else {api.DEFAULT_PLATFORM})",
    )
    rp.add_argument(
        "--kernel",
        default=None,
        metavar="VERSION[:k=v,...]",
        help="the mainline kernel version modelled, with options (idle_tick, hz, freq_invariance, housekeeping, rcu_tick, kpath, sched_energy_aware, lisa_module); "
        "a version between two supported ones runs the older one's semantics (default: the newest, "
        "see `govlab list kernels`)",
    )
    rp.add_argument("--cpufreq", default="schedutil", metavar=spec, help="(default: %(default)s)")
    rp.add_argument("--cpuidle", default="menu", metavar=spec, help="(default: %(default)s)")
    rp.add_argument("--seed", type=int, default=api.DEFAULT_SEED, metavar="N", help="(default: %(default)s)")
    rp.add_argument("--pin", action="store_true", help="keep each task on the CPUs it ran on in the trace")
    rp.add_argument(
        "--timed-wakeups",
        action="store_true",
        help="replay a sleep ended by another task as a timed sleep of the recorded length instead of a wait for that task",
    )
    rp.add_argument("--format", choices=("text", "json"), default="text", help="(default: %(default)s)")
    rp.set_defaults(handler=_cmd_trace_replay)
    return parser


def _write(text: str) -> int:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `govlab ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


class _ProgressBar:
    """A tqdm bar on stderr, in simulated seconds, made at the first report.

    tqdm's ``delay`` keeps it hidden for runs shorter than PROGRESS_DELAY_S.
    The rate is simulated seconds per wall second (tqdm would invert it below 1).
    """

    def __init__(self) -> None:
        self._bar: Any = None
        self._start = time.monotonic()

    def __call__(self, done_ns: int, total_ns: int) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total_ns / 1e9,
                file=sys.stderr,
                delay=PROGRESS_DELAY_S,
                leave=False,
                dynamic_ncols=True,
                bar_format="{percentage:3.0f}%|{bar}| {n:.2f}/{total:.2f} sim s "
                "[{elapsed}<{remaining}{postfix}]",
            )
        wall_s = time.monotonic() - self._start
        if wall_s > 0:
            self._bar.set_postfix_str(f"{done_ns / 1e9 / wall_s:.3g} sim s/s", refresh=False)
        self._bar.update(done_ns / 1e9 - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
