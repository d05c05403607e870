#!/usr/bin/env bash
# Compare two findings files written by run.sh (say, main's and a branch's).
#
#   bench/triage/diff.sh OLD.tsv NEW.tsv
#
# Prints the findings that disappeared, the new ones, the ones whose message
# changed (same module, rule and position), and the count per module and
# rule in both files. Exit status 0 when the files are identical, 1 when not.
set -euo pipefail
[[ $# == 2 ]] || { sed -n '2,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
OLD=$1 NEW=$2
export LC_ALL=C

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sort -u "$OLD" >"$tmp/old"
sort -u "$NEW" >"$tmp/new"
comm -23 "$tmp/old" "$tmp/new" >"$tmp/only-old"
comm -13 "$tmp/old" "$tmp/new" >"$tmp/only-new"
key() { cut -f1-3 "$1" | sort -u; }
comm -12 <(key "$tmp/only-old") <(key "$tmp/only-new") >"$tmp/changed-keys"
# without KEYS FILE: the lines of FILE whose key is not in KEYS.
# (FILENAME, not NR == FNR: KEYS may be empty.)
without() { awk -F'\t' -v keys="$1" 'FILENAME == keys { k[$0]; next } !(($1 FS $2 FS $3) in k)' "$1" "$2"; }

section() { # section TITLE FILE
	local n
	n=$(grep -c '' "$2" || true)
	echo "## $1: $n"
	[[ $n == 0 ]] || sed 's/^/  /' "$2"
	echo
}
without "$tmp/changed-keys" "$tmp/only-old" >"$tmp/gone"
without "$tmp/changed-keys" "$tmp/only-new" >"$tmp/added"
section "gone (in $OLD only)" "$tmp/gone"
section "new (in $NEW only)" "$tmp/added"
{
	while IFS= read -r k; do
		grep -F "$k	" "$tmp/only-old" | sed 's/^/- /'
		grep -F "$k	" "$tmp/only-new" | sed 's/^/+ /'
	done <"$tmp/changed-keys"
} >"$tmp/changed"
echo "## message changed: $(grep -c '' "$tmp/changed-keys" || true) positions"
sed 's/^/  /' "$tmp/changed"
echo

echo "## count per module and rule (old -> new)"
join -t$'\t' -a1 -a2 -e0 -o 0,1.2,2.2 \
	<(cut -f1,2 "$tmp/old" | sort | uniq -c | awk '{print $2 "/" $3 "\t" $1}' | sort) \
	<(cut -f1,2 "$tmp/new" | sort | uniq -c | awk '{print $2 "/" $3 "\t" $1}' | sort) |
	awk -F'\t' '{ mark = ($2 == $3) ? "" : "  *"; printf "  %-70s %5d -> %5d%s\n", $1, $2, $3, mark; o += $2; n += $3 }
		END { printf "  %-70s %5d -> %5d\n", "total", o, n }'
cmp -s "$tmp/old" "$tmp/new"
