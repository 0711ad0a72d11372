#!/bin/bash
# Bit-identity check for speed work (bench/PROFILE-s31.md, PROFILE-s32.md): runs run_one on every line of
# configs.txt (NAME|PLATFORM KERNEL WORKLOAD CPUFREQ CPUIDLE SECONDS, seed 1) with RUN_ONE_JSON and
# compares each RunResult JSON byte for byte with the reference binary's.
#   tools/identity/check.sh REF_BINARY NEW_BINARY OUTDIR
# Run from the repository root (the mix line names bench/mix.toml). A reference JSON already in OUTDIR
# is reused. Exit status 1 when any run fails or differs.
set -u
ref=$1; new=$2; out=$3; bad=0
here=$(dirname "$0")
mkdir -p "$out"
while IFS='|' read -r name args; do
  [ -z "$name" ] && continue
  if [ ! -f "$out/$name.ref" ]; then
    # shellcheck disable=SC2086
    RUN_ONE_JSON="$out/$name.ref" nice -n 15 "$ref" $args 1 >/dev/null 2>"$out/$name.ref.err" || { echo "REF FAIL $name"; bad=1; }
  fi
  # shellcheck disable=SC2086
  RUN_ONE_JSON="$out/$name.new" nice -n 15 "$new" $args 1 >/dev/null 2>"$out/$name.new.err" || { echo "FAIL $name"; bad=1; }
  cmp -s "$out/$name.ref" "$out/$name.new" || { echo "DIFF $name"; bad=1; }
done < "$here/configs.txt"
echo "checked $(grep -c . "$here/configs.txt") configurations, bad=$bad"
exit $bad
