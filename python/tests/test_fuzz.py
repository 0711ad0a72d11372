"""A seeded fuzz of the command line and of every file reader (issue 39).

Each case is a command line: a valid one with an option's value replaced by
a hostile one, or a valid command reading a file mutated from a real one
(deleted, repeated or garbled bytes, numbers made huge, negative or absurd,
the file cut short). Whatever the case, ``govlab`` must exit 0 or 2, raise
nothing (no traceback, no Rust panic), say what is wrong on one line of at
most 300 characters (its echoed values and lists of names cut to fit), and
change no file but the outputs the command names.
Valid runs are kept short (2 ms simulated), so the values a case may give are
not ones that make a valid long run.

Cases run in this process (``govlab.cli.main``), so a few thousand take
under a minute; ``GOVLAB_FUZZ_CASES`` and ``GOVLAB_FUZZ_SEED`` change how
many and which.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import re
import struct
import time
from pathlib import Path

import pytest

from govlab import cli

REPO = Path(__file__).resolve().parents[2]
CASES = int(os.environ.get("GOVLAB_FUZZ_CASES", "2500"))
SEED = int(os.environ.get("GOVLAB_FUZZ_SEED", "39"))

#: Real files whose mutations feed each reader, and the command that reads one.
SEEDS = {
    "platform": (REPO / "data" / "platforms" / "juno-r0.toml", ".toml", lambda f: ["run", "--platform", f, "--duration", "2ms"]),
    "rtapp": (REPO / "data" / "real" / "rt-app" / "template.json", ".json", lambda f: ["run", "--workload", f"rtapp:file={f}", "--duration", "2ms"]),
    "trace-text": (REPO / "data" / "real" / "trappy" / "trace_idle_unsorted.txt", ".txt", lambda f: ["trace", "stats", f]),
    "trace-report": (REPO / "data" / "real" / "trappy" / "trace_idle.report.txt", ".txt", lambda f: ["trace", "stats", f, "--format", "json"]),
    "systrace": (REPO / "data" / "real" / "trappy" / "trace_systrace.html", ".html", lambda f: ["trace", "stats", f]),
    "trace-dat": (REPO / "data" / "real" / "trappy" / "trace_idle.dat", ".dat", lambda f: ["trace", "stats", f]),
}


def _small_dat(data: bytes) -> bytes:
    """``data``, a trace.dat (v6, trace-cmd.dat(5)), without its kallsyms and with only the first
    ring-buffer page of each CPU: a megabyte to mutate instead of three."""

    def u32(at: int) -> int:
        return struct.unpack_from("<I", data, at)[0]

    def u64(at: int) -> int:
        return struct.unpack_from("<Q", data, at)[0]

    page = u32(data.index(b"\0", 10) + 3)  # after the magic, the version and two bytes
    at = data.index(b"\0", 10) + 7
    for tag in (b"header_page\0", b"header_event\0"):
        at += len(tag)
        at += 8 + u64(at)
    n, at = u32(at), at + 4  # ftrace's own event formats
    for _ in range(n):
        at += 8 + u64(at)
    systems, at = u32(at), at + 4
    for _ in range(systems):
        at = data.index(b"\0", at) + 1
        n, at = u32(at), at + 4
        for _ in range(n):
            at += 8 + u64(at)
    kallsyms = at
    head = data[:kallsyms] + struct.pack("<I", 0) + data[kallsyms + 4 + u32(kallsyms) :]
    fly = head.index(b"flyrecord\0")
    options = head.find(b"options  \0")
    (cpus,) = struct.unpack_from("<I", head, (options if 0 <= options < fly else fly) - 4)
    table = fly + 10
    pairs = [struct.unpack_from("<QQ", head, table + 16 * i) for i in range(cpus)]
    out = bytearray(head[: table + 16 * cpus])
    out += bytes(-len(out) % page)
    for i, (offset, size) in enumerate(pairs):
        struct.pack_into("<QQ", out, table + 16 * i, len(out), min(size, page))
        out += data[offset : offset + min(size, page)]
    return bytes(out)


WORKLOAD = """\
description = "fuzz seed"
[[channel]]
name = "ping"
[[series]]
name = "rtt"
[[task]]
comm = "client"
loop = "forever"
ops = [
  { mark = true },
  { send = "ping", bytes = 64 },
  { run = "20us", mem = 0.1 },
  { record = "rtt", since = "mark" },
  { sleep = "1ms", dist = "exp" },
]
[[task]]
comm = "server"
loop = "forever"
ops = [ { recv = "ping" }, { run = "10us" } ]
"""

EXPERIMENT = """\
[experiment]
name = "fuzz"
platform = "skylake-e3-1240v5"
workload = "periodic:tasks=1,run_us=500,period_us=2000"
duration = "2ms"
repeats = 1
seed = 1

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "schedutil"
cpufreq = "schedutil"
"""

#: Values an option may be given instead of a sensible one.
HOSTILE = [
    "", " ", "-1", "0", "-0", "1e309", "nan", "inf", "-inf", "9" * 40, "-" + "9" * 40, "0.0000001", "1ns", "0s",
    "1000000000000s", "x" * 1000, "é", "\n", "\t", "../", "/", ".", "/dev/null", "/dev/zero", "{fifo}", "{dir}",
    "{dir}/", "{dir}/no/such/x", ":", ",", "=", "a=b", ":a=b,", "periodic:tasks=-1", "periodic:tasks=1e9",
    "periodic:tasks=99999999", "py:x.py:G", "py:{fifo}:G", "rtapp:file={fifo}", "rtapp:file=", "{input}", "{output}",
    "performance:foo=1", "userspace:scaling_setspeed=-5", "menu:", "0.003", "v6.8", "text", "json",
]

#: Valid command lines; a case replaces one value (marked by its index) with a hostile one.
COMMANDS = [
    ["run", "--duration", "2ms"],
    ["run", "--platform", "rk3399", "--duration", "2ms"],
    ["run", "--workload", "periodic:tasks=2", "--duration", "2ms"],
    ["run", "--cpufreq", "schedutil", "--duration", "2ms"],
    ["run", "--cpuidle", "teo", "--duration", "2ms"],
    ["run", "--kernel", "5.4", "--duration", "2ms"],
    ["run", "--seed", "7", "--duration", "2ms"],
    ["run", "--duration", "2ms", "--trace", "{output}"],
    ["run", "--duration", "2ms", "--turbostat-interval", "1ms"],
    ["run", "--duration", "2ms", "--turbostat-interval", "1ms", "--plot", "{output}"],
    ["run", "--duration", "2ms", "--show-config"],
    ["run", "--duration", "2ms", "--max-events", "1000000"],
    ["run", "--duration", "2ms", "--turbostat", "--show", "Busy%"],
    ["list", "governors", "--kernel", "4.16"],
    ["list", "platforms"],
    ["trace", "stats", "{trace}"],
    ["trace", "stats", "{trace}", "--platform", "juno-r0"],
    ["trace", "stats", "{trace}", "--html", "{output}"],
    ["trace", "replay", "{trace}", "--cpufreq", "performance"],
    ["report", "{db}", "--format", "csv"],
    ["report", "{db}", "--html", "{output}"],
    ["report", "{db}", "--experiment", "fuzz"],
    ["compare", "{experiment}", "--db", "{db}", "--jobs", "1"],
    ["compare", "{experiment}", "--db", "{db}", "--jobs", "1", "--html", "{output}"],
]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random edits of ``data``."""
    for _ in range(rng.randint(1, 3)):
        n = len(data)
        at = rng.randrange(n + 1)
        kind = rng.randrange(7)
        if kind == 0 and n:  # delete a slice
            data = data[:at] + data[at + rng.randint(1, 64):]
        elif kind == 1 and n:  # repeat a slice
            piece = data[at:at + rng.randint(1, 256)]
            data = data[:at] + piece * rng.randint(2, 50) + data[at:]
        elif kind == 2:  # random bytes
            data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[at:]
        elif kind == 3:  # a number made hostile
            numbers = list(re.finditer(rb"-?\d+(\.\d+)?", data))
            if numbers:
                m = rng.choice(numbers)
                value = rng.choice([b"0", b"-1", b"1e309", b"9" * 30, b"-" + b"9" * 30, b"0.0", b"nan", b"4294967296"])
                data = data[:m.start()] + value + data[m.end():]
        elif kind == 4:  # cut short
            data = data[:at]
        elif kind == 5:  # nest
            depth = rng.choice([10, 1000, 20000])
            data = data[:at] + b"[" * depth + b"]" * depth + data[at:]
        else:  # a string made long or strange
            strings = list(re.finditer(rb'"[^"\n]*"', data))
            if strings:
                m = rng.choice(strings)
                value = rng.choice([b'""', b'"' + b"x" * 5000 + b'"', b'"\\u0000"', b'"\xff"', b'"-1"'])
                data = data[:m.start()] + value + data[m.end():]
    return data


def _digest(paths: list[Path]) -> dict[Path, str | None]:
    out: dict[Path, str | None] = {}
    for p in paths:
        try:
            out[p] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
        except OSError:
            out[p] = None
    return out


@pytest.fixture(scope="module")
def arena(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "dir").mkdir()
    os.mkfifo(d / "fifo")
    (d / "trace.txt").write_bytes(SEEDS["trace-text"][0].read_bytes())
    (d / "input.txt").write_text("an input that must not change\n")
    (d / "experiment.toml").write_text(EXPERIMENT)
    (d / "workload.toml").write_text(WORKLOAD)
    db = d / "results.sqlite"
    assert _main(["compare", str(d / "experiment.toml"), "--db", str(db), "--jobs", "1"])[0] == 0
    return {
        "root": str(d), "fifo": str(d / "fifo"), "dir": str(d / "dir"), "trace": str(d / "trace.txt"),
        "input": str(d / "input.txt"), "experiment": str(d / "experiment.toml"), "db": str(db),
        "workload": str(d / "workload.toml"),
    }


def _main(argv: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = cli.main(argv)
    return status, err.getvalue()


#: Options that name a file the command writes.
OUTPUT_OPTIONS = ("--html", "--trace", "--plot", "--db")


def _outputs(argv: list[str]) -> set[str]:
    return {os.path.realpath(v) for o, v in zip(argv, argv[1:]) if o in OUTPUT_OPTIONS}


def _cases(arena: dict[str, str], rng: random.Random) -> list[tuple[str, list[str], list[Path]]]:
    """(label, argv, files to watch) of each case; a file a case reads is written here."""
    cases = []
    root = Path(arena["root"])
    fixed = [Path(arena[k]) for k in ("trace", "input", "experiment", "workload")]
    for i in range(CASES):
        output = str(root / f"out-{i}.html")
        fill = {**arena, "output": output}
        own: list[Path] = []
        if rng.random() < 0.5:
            argv = list(rng.choice(COMMANDS))
            slot = rng.randrange(1, len(argv))
            argv[slot] = rng.choice(HOSTILE)
            if rng.random() < 0.3:
                argv.insert(rng.randrange(1, len(argv) + 1), rng.choice(["--html", "--trace", "--db", "--jobs", "--format", "--seed"]))
            label = "option"
        else:
            label = rng.choice([*SEEDS, "workload", "experiment"])
            if label == "workload":
                seed, suffix, command = WORKLOAD.encode(), ".toml", lambda f: ["run", "--workload", f, "--duration", "2ms"]
            elif label == "experiment":
                seed, suffix = EXPERIMENT.encode(), ".toml"
                command = lambda f: ["compare", f, "--db", arena["db"], "--jobs", "1"]  # noqa: E731
            else:
                path, suffix, command = SEEDS[label]
                seed = path.read_bytes() if label != "trace-dat" else _small_dat(path.read_bytes())
            f = root / f"in-{i}{suffix}"
            f.write_bytes(_mutate(seed, rng))
            own.append(f)
            argv = command(str(f))
        argv = [a.format(**fill) if "{" in a else a for a in argv]
        written = _outputs(argv)
        cases.append((label, argv, [p for p in fixed + own if os.path.realpath(p) not in written]))
    return cases


def too_long(line: str) -> bool:
    """Over 300 characters."""
    return len(line) > 300


def test_fuzz_cli_and_readers(arena, monkeypatch):
    monkeypatch.chdir(arena["root"])  # a relative output name lands in the arena
    rng = random.Random(SEED)
    cases = _cases(arena, rng)
    failures: list[str] = []
    for label, argv, watched in cases:
        before = _digest(watched)
        started = time.monotonic()
        try:
            status, err = _main(argv)
        except BaseException as e:  # a traceback or a Rust panic (PanicException is a BaseException)
            failures.append(f"{label} {argv[:6]}: raised {type(e).__name__}: {str(e)[:200]}")
            continue
        # argparse's own errors (a bad option) print its usage lines first, then "govlab CMD: error: ...".
        errors = [line for line in err.splitlines() if re.match(r"govlab( [a-z]+)*: error: ", line)]
        if status not in (0, 2):
            failures.append(f"{label} {argv[:6]}: exit {status}: {err[-300:]}")
        elif status == 2 and (len(errors) != 1 or too_long(errors[0])):
            failures.append(f"{label} {argv[:6]}: message {err[:400]!r}")
        elif "Traceback" in err or "panicked" in err:
            failures.append(f"{label} {argv[:6]}: {err[:300]}")
        if os.environ.get("GOVLAB_FUZZ_SLOW") and time.monotonic() - started > 0.5:
            print(f"slow {time.monotonic() - started:.1f}s {label} {argv}")
        after = _digest(watched)
        changed = [str(p) for p in watched if before[p] != after[p]]
        if changed:
            failures.append(f"{label} {argv[:6]}: changed {changed}")
        if len(failures) >= 20:
            break
    assert not failures, f"{len(failures)} failing case(s) of {len(cases)} (seed {SEED}):\n" + "\n".join(failures)
