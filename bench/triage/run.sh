#!/usr/bin/env bash
# Run confinelint over the triage corpus and write a normalized findings
# file; see bench/triage/README.md.
#
#   bench/triage/run.sh [-o OUT.tsv] [-bin CONFINELINT] [-m MODULE_REGEX]
#
#   -o FILE    findings file (default findings.tsv in the scratch directory);
#              the summary table goes to FILE with .summary.md in place of
#              .tsv, and to stdout
#   -bin PATH  use this confinelint binary instead of building the tree this
#              script sits in
#   -m REGEX   only the modules whose path matches REGEX (a quick run)
#   -list      print the packages to vet (after go list's filter) and exit
#   -fresh     give the built binary a unique build ID, so that go vet reuses
#              no cached result of an identical earlier build (to time a
#              vet-cold run; without it a rerun of the same tree is cached)
#
# Environment: TRIAGE_WORK=DIR scratch directory: the binary, the raw go vet
# -json output per module (raw/*.json, with every finding's related
# positions) and the logs (logs/). Default: FILE with .work in place of .tsv
# when -o FILE is given, else a new temporary directory; so runs with
# different outputs can go at the same time.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=
BIN=
MODRE=.
FRESH=0
LIST=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-o) OUT=$2; shift 2 ;;
	-bin) BIN=$2; shift 2 ;;
	-m) MODRE=$2; shift 2 ;;
	-fresh) FRESH=1; shift ;;
	-list) LIST=1; shift ;;
	*) sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
	esac
done
[[ -z $OUT || $OUT == /* ]] || OUT=$PWD/$OUT
if [[ $LIST == 1 ]]; then
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/confinelint-triage.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
elif [[ -n ${TRIAGE_WORK:-} ]]; then
	WORK=$TRIAGE_WORK
elif [[ -n $OUT ]]; then
	WORK=${OUT%.tsv}.work
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/confinelint-triage.XXXXXX")
fi
OUT=${OUT:-$WORK/findings.tsv}
[[ -z $BIN || $BIN == /* ]] || BIN=$PWD/$BIN

T0=$(date +%s)
phase() { printf '== [%4ss] %s\n' $(($(date +%s) - T0)) "$*" >&2; }

rm -rf "$WORK/raw" "$WORK/logs"
mkdir -p "$WORK/raw" "$WORK/logs" "$(dirname "$OUT")"

cd "$HERE"
MODCACHE=$(go env GOMODCACHE)
GOROOT_DIR=$(go env GOROOT)

# moddir MODULE: the module's directory in the module cache (downloaded on
# first use).
moddir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

# expand MODULE PATTERN: the import paths of the pattern's directories.
# "X/..." is X and every directory below it that holds Go files, except
# testdata, vendor, hidden directories and nested modules; go list weeds out
# the directories that are no package on this platform.
expand() {
	local mod=$1 pat=$2 dir base
	dir=$(moddir "$mod")
	case $pat in
	...) base=$dir ;;
	*/...) base=$dir/${pat%/...} ;;
	*) echo "$mod/$pat"; return ;;
	esac
	find "$base" \( -name testdata -o -name vendor -o -name '[._]*' \) -prune -o -name go.mod -printf 'MOD %h\n' -o -name '*.go' -printf '%h\n' |
		sort -u | awk -v dir="$dir" -v mod="$mod" '
			$1 == "MOD" { if ($2 != dir) nested[++n] = $2 "/"; next }
			{ for (i = 1; i <= n; i++) if (index($0 "/", nested[i]) == 1) next
			  print mod substr($0, length(dir) + 1) }'
}

# flags_of MODULE: its go flags from packages.txt.
flags_of() { awk -v m="$1" '$1 == m && $2 ~ /^-/ {print $2}' packages.txt; }

# packages_of MODULE SLUG: the packages to vet; go list's verdict on every
# candidate goes to logs/SLUG.list.
packages_of() {
	local mod=$1 slug=$2 flags candidates
	mapfile -t flags < <(flags_of "$mod")
	mapfile -t candidates < <(awk -v m="$mod" '$1 == m && $2 !~ /^-/ {print $2}' packages.txt |
		while read -r pat; do expand "$mod" "$pat"; done | sort -u)
	go list "${flags[@]}" -e -f '{{.ImportPath}}{{"\t"}}{{if .Error}}{{.Error}}{{end}}' "${candidates[@]}" \
		>"$WORK/logs/$slug.list" 2>&1
	awk -F'\t' 'NF == 2 && $2 == "" {print $1}' "$WORK/logs/$slug.list"
}

mapfile -t MODULES < <(grep -vE '^[[:space:]]*(#|$)' packages.txt | awk '!seen[$1]++ {print $1}' | grep -E -- "$MODRE")
[[ ${#MODULES[@]} -gt 0 ]] || { echo "triage: no module matches $MODRE" >&2; exit 1; }

if [[ $LIST == 1 ]]; then
	for mod in "${MODULES[@]}"; do packages_of "$mod" "$(echo "$mod" | tr '/' '_')"; done
	exit 0
fi

REV=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')
if [[ -z $BIN ]]; then
	phase "build confinelint from $ROOT ($REV)"
	ldflags=()
	[[ $FRESH == 0 ]] || ldflags=(-ldflags="-buildid=triage-fresh-$(date +%s%N)")
	(cd "$ROOT" && go build "${ldflags[@]}" -o "$WORK/confinelint" ./cmd/confinelint)
	BIN=$WORK/confinelint
fi
go build -o "$WORK/tsv" ./tsv

# The vet tool's identity: a different binary (any change of the tree) is a
# different go vet tool, so no cached vet result of another build is reused.
phase "confinelint: $BIN ($(sha256sum "$BIN" | cut -c1-12)); $(go version)"
: >"$WORK/all.tsv"
printf 'module\tpackages\tskipped\twall_s\tcpu_s\tmax_rss_mib\tvet_exit\n' >"$WORK/times.tsv"
for mod in "${MODULES[@]}"; do
	slug=$(echo "$mod" | tr '/' '_')
	mapfile -t flags < <(flags_of "$mod")
	mapfile -t pkgs < <(packages_of "$mod" "$slug")
	skipped=$(awk -F'\t' '$2 != ""' "$WORK/logs/$slug.list" | wc -l)
	phase "$mod: ${#pkgs[@]} packages ($skipped skipped, see logs/$slug.list) ${flags[*]}"
	rc=0
	/usr/bin/time -f '%e %U %S %M' -o "$WORK/logs/$slug.time" \
		go vet "${flags[@]}" -vettool="$BIN" -json "${pkgs[@]}" >"$WORK/raw/$slug.json" 2>"$WORK/logs/$slug.log" || rc=$?
	# the last line: GNU time writes "Command exited with non-zero status N" first
	read -r wall user sys rsskb < <(tail -1 "$WORK/logs/$slug.time")
	if [[ $rc != 0 ]]; then
		echo "   go vet exited $rc; errors (logs/$slug.log):" >&2
		grep -vE '^#' "$WORK/logs/$slug.log" | head -5 | sed 's/^/     /' >&2 || true
	fi
	"$WORK/tsv" normalize -modcache "$MODCACHE" -goroot "$GOROOT_DIR" <"$WORK/raw/$slug.json" >>"$WORK/all.tsv"
	printf '%s\t%s\t%s\t%s\t%.0f\t%s\t%s\n' "$mod" "${#pkgs[@]}" "$skipped" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" $((rsskb / 1024)) "$rc" >>"$WORK/times.tsv"
done

LC_ALL=C sort -u "$WORK/all.tsv" >"$OUT"
SUMMARY=${OUT%.tsv}.summary.md
{
	tree=$REV
	[[ $BIN == "$WORK/confinelint" ]] || tree="-bin $BIN"
	echo "findings: $(wc -l <"$OUT"); confinelint $(sha256sum "$BIN" | cut -c1-12) ($tree); $(date -u '+%Y-%m-%d %H:%M UTC'); $(($(date +%s) - T0)) s; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	"$WORK/tsv" summary "$OUT"
	echo
	echo '| module | packages | skipped | go vet wall s | CPU s (user+sys) | max process RSS MiB | go vet exit |'
	echo '|---|---|---|---|---|---|---|'
	tail -n +2 "$WORK/times.tsv" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7; w += $4; c += $5}
		END {printf "| total | | | %.0f | %.0f | | |\n", w, c}'
} >"$SUMMARY"
cat "$SUMMARY"
phase "done: $OUT ($(wc -l <"$OUT") findings), $SUMMARY; raw output in $WORK/raw"
