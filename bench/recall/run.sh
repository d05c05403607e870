#!/usr/bin/env bash
# Recall on small deadlock programs, one shipped-deadlock shape each (our
# own code, written after the shapes of issue 14, and probes written
# without sight of the tool, with fixed twins): how many of the
# expected findings confinelint reports, and how many findings each
# program gets (the goal: the expected one, at most 2 in all).
#
#   bench/recall/run.sh [-bin CONFINELINT]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=
[[ ${1:-} == -bin ]] && BIN=$2
if [[ -z $BIN ]]; then
	BIN=$(mktemp -d)/confinelint
	(cd "$HERE/../.." && go build -o "$BIN" ./cmd/confinelint)
fi
cd "$HERE"
out=$("$BIN" ./... 2>&1 | grep -v '^[[:space:]]' || true)
found=0 total=0 extra=0 correct=0 silent=0
while read -r prog pos rule shape; do
	[[ $prog == \#* || -z $prog ]] && continue
	n=$(grep -c "^$prog/" <<<"$out" || true)
	if [[ $rule == none ]]; then
		correct=$((correct + 1))
		((n == 0)) && silent=$((silent + 1))
		printf '%-2s %-16s %-14s %s (%d findings)\n' "$prog" - "correct code" "$( ((n == 0)) && echo silent || echo NOISY)" "$n"
		continue
	fi
	if [[ $pos == - ]]; then
		printf '%-2s %-16s %-14s known miss (%d findings)\n' "$prog" - "$rule" "$n"
		continue
	fi
	total=$((total + 1))
	if grep -q "^$pos:[0-9]*: .*\[$rule\]$" <<<"$out"; then
		found=$((found + 1))
		verdict=found
	else
		verdict=MISSED
	fi
	((n > 2)) && extra=$((extra + 1))
	printf '%-2s %-16s %-14s %s (%d findings)\n' "$prog" "$pos" "$rule" "$verdict" "$n"
done <expected.txt
echo "recall: $found/$total expected findings; programs with more than 2 findings: $extra; correct programs silent: $silent/$correct"
