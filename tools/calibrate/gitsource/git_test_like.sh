#!/bin/sh
# A stand-in for one git test script (t/t*.sh), run by dash as `make test`
# runs each script: a trash repository, then test_expect_success-style
# steps, each a handful of git commands and shell helpers (test, grep,
# cat, echo > file, command substitution). Not git's own suite (its
# sources are not on this machine): it measures the process pattern, the
# per-process CPU and the process count of such steps on this machine.
set -e
T=$(mktemp -d)
cd "$T"
git init -q .
git config user.email t@example.com
git config user.name T
i=0
while [ $i -lt 20 ]; do
	echo "line $i" >> file
	git add file
	git commit -q -m "c$i"
	test "$(git rev-list --count HEAD)" = $((i + 1))
	git log --oneline | grep -q "c$i"
	git diff HEAD~0 --stat >/dev/null
	cat file | wc -l >/dev/null
	i=$((i + 1))
done
cd /
rm -rf "$T"
