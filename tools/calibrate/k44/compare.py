#!/usr/bin/env python3
"""cc1's CPU time per kernel object in two proclog.so logs (the timed build and resample.sh's re-compiles):
the objects in both, their means and the ratio of the sums.

Usage: compare.py BUILD.proclog[.xz] RESAMPLE.proclog
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kbuild"))
import summarize  # noqa: E402


def cc1_by_object(path):
    ims = summarize.load(path)
    parent = summarize.parent_of(ims)
    obj_of = {}
    for im in ims:
        if summarize.is_kernel_cc(im):
            dep = im["args"].split(" ", 2)[1].split(",", 2)[2]
            d, f = dep.rsplit("/", 1) if "/" in dep else ("", dep)
            obj_of[im["inst"]] = (d + "/" if d else "") + f[1:-2]
    out = {}
    for im in ims:
        if im["comm"] == "cc1" and parent.get(im["inst"]) in obj_of:
            out[obj_of[parent[im["inst"]]]] = im["own"] / 1e6
    return out


def main():
    a, b = cc1_by_object(sys.argv[1]), cc1_by_object(sys.argv[2])
    both = sorted(set(a) & set(b))
    sa, sb = sum(a[o] for o in both), sum(b[o] for o in both)
    ratios = sorted(a[o] / b[o] for o in both)
    print(f"objects in both: {len(both)}; cc1 mean {sa / len(both):.1f} ms in the build, "
          f"{sb / len(both):.1f} ms re-compiled; build / re-compiled: {sa / sb:.4f} "
          f"(median per object {ratios[len(ratios) // 2]:.4f})")


if __name__ == "__main__":
    main()
