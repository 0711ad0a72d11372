#!/usr/bin/env python3
"""Summarise a proclog.so log of a kernel build (tools/calibrate/kbuild/README.md).

Usage: summarize.py LOG[.gz|.xz] [--json OUT] [--chains OUT] [--tree "Linux 4.4.178"]

Each line of the log is one program image: pid ppid comm how cpu_at_start
cpu_at_end start end argv. An image's own CPU time is its cpu_at_end less
that of the image it replaced (an exec in the same pid), else all of it
(a process's CPU clock starts at zero at its fork).

Phases, by when an image starts: the preparation runs from the top make's
start until the first directory descend (`make -f scripts/Makefile.build
obj=DIR need-builtin=1`); the link from the first image that builds
vmlinux.a or runs scripts/Makefile.vmlinux_o or link-vmlinux.sh; the
compile phase between them.

A kernel object's recipe is the shell whose child is a gcc driver with
`-D__KERNEL__ ... -c -o X.o`: its children (and theirs) are the object's
chain.
"""
import gzip
import json
import lzma
import statistics
import sys
from collections import Counter, defaultdict


TREE = "Linux 6.1"
# v4.4's vmlinux-dirs: the top Makefile's init-y, core-y, drivers-y, net-y and libs-y, and arch/x86/Makefile's
# (the preparation descends into arch/x86/entry/syscalls and arch/x86/tools, which are not among them).
VMLINUX_DIRS = {"init", "usr", "kernel", "certs", "mm", "fs", "ipc", "security", "crypto", "block",
                "drivers", "sound", "firmware", "net", "lib", "virt", "arch/x86", "arch/x86/lib",
                "arch/x86/pci", "arch/x86/power", "arch/x86/video", "arch/x86/math-emu", "arch/x86/oprofile"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
    images = []
    # newline="\n": an argv may hold a carriage return (git's test suite passes some), not a line end.
    with opener(path, "rt", errors="replace", newline="\n") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 8)
            if len(parts) < 8:
                continue
            pid, ppid, comm, how = int(parts[0]), int(parts[1]), parts[2], parts[3]
            c0, c1, t0, t1 = (int(x) for x in parts[4:8])
            images.append(dict(pid=pid, ppid=ppid, comm=comm, how=how, cpu0=c0, cpu1=c1,
                               t0=t0, t1=t1, args=parts[8] if len(parts) > 8 else ""))
    # Own CPU: per pid, in start order; a failed exec logs the image twice
    # (keep the last line of a pid's image).
    by_pid = defaultdict(list)
    for im in images:
        by_pid[im["pid"]].append(im)
    out = []
    for pid, ims in by_pid.items():
        ims.sort(key=lambda im: (im["t0"], im["t1"]))
        dedup = []
        for im in ims:
            if dedup and dedup[-1]["t0"] == im["t0"]:
                dedup[-1] = im
            else:
                dedup.append(im)
        prev = None
        for im in dedup:
            same = prev is not None and prev["how"] == "exec" and im["cpu0"] >= prev["cpu1"]
            im["own"] = im["cpu1"] - (prev["cpu1"] if same else 0)
            im["execd_from"] = prev["comm"] if same else None
            # One process (a fork and the images it exec'd) is one instance: a
            # build of more processes than pid_max reuses pids (32768 here).
            im["inst"] = prev["inst"] if same else (pid, im["t0"])
            prev = im
            out.append(im)
    out.sort(key=lambda im: im["t0"])
    return out


def parent_of(ims):
    """Each process instance's parent instance: the instance of its ppid
    that was alive when it started (pid reuse makes the ppid alone
    ambiguous in a long build)."""
    life = {}
    for im in ims:
        lo, hi = life.get(im["inst"], (im["t0"], im["t1"]))
        life[im["inst"]] = (min(lo, im["t0"]), max(hi, im["t1"]))
    by_pid = defaultdict(list)
    for inst, (lo, hi) in life.items():
        by_pid[inst[0]].append((lo, hi, inst))
    parent = {}
    for im in ims:
        if im["inst"] in parent or im["execd_from"] is not None:
            continue
        alive = [i for lo, hi, i in by_pid.get(im["ppid"], []) if lo <= im["t0"] <= hi]
        parent[im["inst"]] = max(alive, key=lambda i: i[1]) if alive else None
    return parent


def stats(xs):
    if not xs:
        return {}
    xs = sorted(xs)
    n = len(xs)
    mean = sum(xs) / n
    return dict(n=n, sum_ms=sum(xs) / 1e6, mean_ms=mean / 1e6, median_ms=statistics.median(xs) / 1e6,
                p90_ms=xs[min(n - 1, int(0.9 * n))] / 1e6, max_ms=xs[-1] / 1e6,
                cv=(statistics.pstdev(xs) / mean) if mean > 0 and n > 1 else 0.0)


def is_kernel_cc(im):
    """A Kbuild compile of a kernel object: `gcc -Wp,-MMD,DIR/.X.o.d ...`
    (the log keeps the first 200 bytes of argv), not a host program's."""
    # argv[0] as make ran it: `gcc`, or a driver's path (KCC=/path/to/gcc: ../k44gcc7/).
    first, _, rest = im["args"].partition(" ")
    a = first.rsplit("/", 1)[-1] + " " + rest
    # v4.4's Kbuild passes -Wp,-MD, (v4.20's 'kbuild: use -MMD' made it -MMD).
    pre = next((p for p in ("gcc -Wp,-MMD,", "gcc -Wp,-MD,") if a.startswith(p)), None)
    if im["comm"] != "gcc" or pre is None:
        return False
    dep = a.split(" ", 2)[1][len(pre) - len("gcc "):]
    return dep.endswith(".o.d") and not dep.startswith(("scripts/", "tools/", "/"))


def grows_with_vmlinux(im):
    """A link step whose work is the whole kernel's objects or symbols
    (scripts/link-vmlinux.sh: the archive and ld over every object, modpost,
    nm and kallsyms over vmlinux, the filter of nm's output, the assembly of
    the kallsyms table, sorttable), as opposed to a helper whose cost is its
    own start-up (sh, rm, make's parsing, `grep -q CONFIG_...`) or the
    compile of init/version-timestamp.o (one object, `gcc -Wp,-MMD,...`)."""
    a, c = im["args"], im["comm"]
    if c in ("ld", "nm", "kallsyms", "objtool", "modpost", "sorttable", "objcopy", "ar"):
        return any(k in a for k in ("vmlinux", "kallsyms", "System.map", "built-in"))
    if c == "cc1":
        return "-lang-asm" in a
    if c in ("gcc", "as"):
        return "-MMD" not in a and "-Wp,-MD," not in a and "version-timestamp" not in a
    if c == "grep":
        return a.startswith("grep -v ")
    return False


def write_chains(path, ims, top_pid, phase, report):
    """The serial phases as one chain of processes each: `phase comm own_ns
    grows` per process, in the order they started, the top make left out
    (it is the model's make task). grows = 1 for a link step whose work
    grows with the kernel's size (grows_with_vmlinux)."""
    with open(path, "w") as f:
        f.write(f"# Serial phases of a {TREE} x86_64 `make -j2 vmlinux` after `make clean`,\n"
                "# measured with tools/calibrate/kbuild/proclog.so (README.md there): one process image a line,\n"
                "# in the order they started: phase, command, own CPU time (ns), 1 if a link step whose\n"
                f"# work grows with the kernel (scaled by kernbench.rs). Kernel objects compiled: "
                f"{report['objects']['count']}.\n")
        for im in ims:
            ph = phase(im)
            if ph == "compile" or im["pid"] == top_pid:
                continue
            grows = int(ph == "link" and grows_with_vmlinux(im))
            f.write(f"{ph} {im['comm']} {im['own']} {grows}\n")


def main():
    path = sys.argv[1]
    out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    global TREE
    if "--tree" in sys.argv:
        TREE = sys.argv[sys.argv.index("--tree") + 1]
    ims = load(path)
    top = ims[0]
    t_start = top["t0"]
    t_end = max(im["t1"] for im in ims)
    descend = [im["t0"] for im in ims if im["comm"] == "make" and "need-builtin=1" in im["args"]]
    if not descend:
        # v4.4 has no need-builtin: the first descend into one of vmlinux's directories.
        descend = [im["t0"] for im in ims if im["comm"] == "make" and "Makefile.build obj=" in im["args"]
                   and im["args"].split("obj=", 1)[1].split(" ")[0] in VMLINUX_DIRS]
    compile_start = min(descend)
    link_marks = [im["t0"] for im in ims
                  if ("vmlinux.a" in im["args"] and im["comm"] in ("sh", "ar"))
                  or "Makefile.vmlinux_o" in im["args"] or "link-vmlinux" in im["args"]]
    link_start = min(link_marks) if link_marks else t_end + 1

    def phase(im):
        if im["t0"] < compile_start:
            return "prepare"
        if im["t0"] < link_start:
            return "compile"
        return "link"

    report = {"log": path, "images": len(ims), "wall_s": (t_end - t_start) / 1e9,
              "phases": {}}
    for ph in ("prepare", "compile", "link"):
        sel = [im for im in ims if phase(im) == ph]
        lo = {"prepare": t_start, "compile": compile_start, "link": link_start}[ph]
        hi = {"prepare": compile_start, "compile": link_start, "link": t_end}[ph]
        by_comm = defaultdict(list)
        for im in sel:
            by_comm[im["comm"]].append(im["own"])
        report["phases"][ph] = {
            "wall_s": (hi - lo) / 1e9,
            "cpu_s": sum(im["own"] for im in sel) / 1e9,
            "images": len(sel),
            "all": stats([im["own"] for im in sel]),
            "by_comm": {c: stats(v) for c, v in sorted(by_comm.items(), key=lambda kv: -sum(kv[1]))},
        }
        if ph != "compile":
            report["phases"][ph]["chain"] = [
                [im["comm"], round(im["own"] / 1e6, 3), round((im["t0"] - lo) / 1e6, 1), im["args"][:90]]
                for im in sel]

    # Per-object recipes: the shell that runs a kernel object's `gcc -c`, and
    # every process under it (by instance, not pid: see parent_of).
    parent = parent_of(ims)
    children = defaultdict(list)
    for im in ims:
        if im["execd_from"] is None and parent.get(im["inst"]) is not None:
            children[parent[im["inst"]]].append(im["inst"])
    images_of = defaultdict(list)
    for im in ims:
        images_of[im["inst"]].append(im)

    def subtree(inst):
        res = []
        for ch in sorted(children.get(inst, []), key=lambda i: i[1]):
            res.extend(images_of[ch])
            res.extend(subtree(ch))
        return res

    recipes = []
    shells = {}
    for im in ims:
        if is_kernel_cc(im) and phase(im) == "compile" and parent.get(im["inst"]) is not None:
            shells[parent[im["inst"]]] = im
    for sh_inst, cc in shells.items():
        sh = next((im for im in images_of[sh_inst] if im["comm"] == "sh"), None)
        recipes.append(dict(sh=sh, chain=subtree(sh_inst), cc=cc))
    patterns = Counter(" ".join(c["comm"] for c in r["chain"]) for r in recipes)
    roles = defaultdict(list)
    for r in recipes:
        if r["sh"] is not None:
            roles["sh"].append(r["sh"]["own"])
        for c in r["chain"]:
            roles[c["comm"]].append(c["own"])
    per_obj = [sum(c["own"] for c in r["chain"]) + (r["sh"]["own"] if r["sh"] else 0) for r in recipes]
    report["objects"] = {
        "count": len(recipes),
        "patterns": patterns.most_common(12),
        "roles": {k: stats(v) for k, v in sorted(roles.items(), key=lambda kv: -sum(kv[1]))},
        "per_object": stats(per_obj),
    }
    # make's own CPU in the compile phase, per object.
    makes = [im for im in ims if im["comm"] == "make" and phase(im) == "compile"]
    report["objects"]["submakes"] = stats([im["own"] for im in makes])
    report["objects"]["make_cpu_per_object_ms"] = (
        sum(im["own"] for im in makes) / max(1, len(recipes)) / 1e6)

    if "--chains" in sys.argv:
        write_chains(sys.argv[sys.argv.index("--chains") + 1], ims, top["pid"], phase, report)

    if out_json:
        with open(out_json, "w") as f:
            json.dump(report, f, indent=1)
    ph = report["phases"]
    print(f"{path}: {report['images']} images, wall {report['wall_s']:.1f} s")
    for name in ("prepare", "compile", "link"):
        p = ph[name]
        a = p["all"]
        if not a:
            print(f"\n== {name}: nothing")
            continue
        print(f"\n== {name}: {p['images']} images, CPU {p['cpu_s']:.2f} s, wall {p['wall_s']:.1f} s; "
              f"per image median {a['median_ms']:.2f} ms, mean {a['mean_ms']:.2f}, p90 {a['p90_ms']:.2f}, "
              f"max {a['max_ms']:.1f}")
        print(f"   {'comm':16s} {'n':>5s} {'sum ms':>9s} {'median':>8s} {'mean':>8s} {'p90':>8s} {'max':>8s}")
        for c, s in list(p["by_comm"].items())[:25]:
            print(f"   {c:16s} {s['n']:5d} {s['sum_ms']:9.1f} {s['median_ms']:8.2f} {s['mean_ms']:8.2f} "
                  f"{s['p90_ms']:8.2f} {s['max_ms']:8.1f}")
    o = report["objects"]
    print(f"\n== kernel objects (compile phase): {o['count']}; make CPU per object "
          f"{o['make_cpu_per_object_ms']:.2f} ms ({o['submakes']['n']} sub-makes)")
    for pat, n in o["patterns"]:
        print(f"   {n:5d}  sh -> {pat}")
    print(f"   {'role':16s} {'n':>5s} {'median':>8s} {'mean':>8s} {'p90':>8s} {'max':>8s} {'cv':>5s}")
    for c, s in o["roles"].items():
        print(f"   {c:16s} {s['n']:5d} {s['median_ms']:8.2f} {s['mean_ms']:8.2f} {s['p90_ms']:8.2f} "
              f"{s['max_ms']:8.1f} {s['cv']:5.2f}")
    s = o["per_object"]
    print(f"   per object (sh and its tree): median {s['median_ms']:.1f} ms, mean {s['mean_ms']:.1f}, "
          f"p90 {s['p90_ms']:.1f}, cv {s['cv']:.2f}")


if __name__ == "__main__":
    main()
