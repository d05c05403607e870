#!/usr/bin/env bash
# Recall on small deadlock programs, one shipped-deadlock shape each (our
# own code, written after the shapes of issue 14, and probes written
# without sight of the tool, with fixed twins): how many of the
# expected findings confinelint reports, and how many findings each
# program gets (the goal: the expected one, at most 2 in all).
#
# Each program is scored twice: as written (package main), and in test
# form, the way a regression test reproduces a deadlock: every file of
# the program's own package renamed *_test.go, `package main` made a
# package of its own and `func main()` a `func TestProbe(_ *testing.T)`,
# on the same lines. In test form a finding may carry the rule's test
# variant (lock-order-test).
#
#   bench/recall/run.sh [-bin CONFINELINT] [-form main|test|both]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=
FORM=both
while [[ $# -gt 0 ]]; do
	case $1 in
	-bin) BIN=$2; shift 2 ;;
	-form) FORM=$2; shift 2 ;;
	*) sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
	esac
done
if [[ -z $BIN ]]; then
	BIN=$(mktemp -d)/confinelint
	(cd "$HERE/../.." && go build -o "$BIN" ./cmd/confinelint)
fi

# score FORM OUTPUT: one line per program, then the summary.
score() {
	local form=$1 out=$2 found=0 total=0 extra=0 correct=0 silent=0
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
		want="^$pos:[0-9]*: .*\[$rule\]$"
		if [[ $form == test ]]; then
			# prog/file.go:N -> prog/file_test.go:N; the rule or its test variant.
			want="^$(sed -E 's#^([^/]+/[^/]+)\.go:#\1_test.go:#' <<<"$pos"):[0-9]*: .*\[$rule(-test)?\]$"
		fi
		if grep -Eq "$want" <<<"$out"; then
			found=$((found + 1))
			verdict=found
		else
			verdict=MISSED
		fi
		((n > 2)) && extra=$((extra + 1))
		printf '%-2s %-16s %-14s %s (%d findings)\n' "$prog" "$pos" "$rule" "$verdict" "$n"
	done <"$HERE/expected.txt"
	echo "recall ($form form): $found/$total expected findings; programs with more than 2 findings: $extra; correct programs silent: $silent/$correct"
}

# testform DIR: a copy of the programs in test form under DIR.
testform() {
	local dir=$1 prog f rel pkg
	cp "$HERE/go.mod" "$dir/"
	for prog in "$HERE"/*/; do
		prog=$(basename "$prog")
		pkg=$(tr -c 'a-z0-9\n' '_' <<<"$prog" | sed 's/^[0-9]/p&/')
		(cd "$HERE" && find "$prog" -name '*.go') | while read -r f; do
			rel=${f#"$prog"/}
			mkdir -p "$dir/$(dirname "$f")"
			if [[ $rel == */* ]]; then # another package of the program: as is
				cp "$HERE/$f" "$dir/$f"
			elif grep -q '^func main() {' "$HERE/$f"; then
				sed -e "s/^package main\$/package $pkg; import \"testing\"/" \
					-e 's/^func main() {/func TestProbe(_ *testing.T) {/' "$HERE/$f" >"$dir/${f%.go}_test.go"
			else
				sed -e "s/^package main\$/package $pkg/" "$HERE/$f" >"$dir/${f%.go}_test.go"
			fi
		done
	done
}

if [[ $FORM == main || $FORM == both ]]; then
	score main "$(cd "$HERE" && "$BIN" ./... 2>&1 | grep -v '^[[:space:]]' || true)"
fi
if [[ $FORM == test || $FORM == both ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	testform "$tmp"
	score test "$(cd "$tmp" && "$BIN" ./... 2>&1 | grep -v '^[[:space:]]' || true)"
fi
