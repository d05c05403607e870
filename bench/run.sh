#!/usr/bin/env bash
# Benchmark confinelint against go vet on real code; see bench/README.md.
#
#   bash bench/run.sh                 full run (REPEAT=3): ~8 min quiet, ~17 min busy
#   QUICK=1 bash bench/run.sh         smoke run: raft + franz-go only, REPEAT=1
#
# Environment:
#   REPEAT=N        cold runs per tool (default 3, QUICK: 1)
#   REPEAT_COLD=N   cold runs per tool only (default REPEAT); reruns still
#                   take REPEAT rounds
#   QUICK=1         smaller package set, one repetition, no profile
#   MICRO=0         skip the testing.B micro-benchmarks
#   PROFILE=0       skip the CPU/heap profiles (corpus in process; PROFPKG as vet runs it)
#   PROFPKG=PKG     package profiled as go vet runs it (default github.com/IBM/sarama)
#   INC=0           skip the incremental (leaf edit) runs
#   COLD=0          skip the cold runs (to debug the other phases)
#   STANDALONE=0    skip the standalone driver against the in-process one
#   STD=0           skip the standalone runs over all of std (the in-process
#                   driver needs ~13 GB there: it runs only if the machine
#                   has STD_MIN_GB, default 16, available)
#   STD_TOOLS=LIST  the drivers run over std (default
#                   "standalone dropdriver inprocess")
#   BENCH_WORK=DIR  scratch directory (default /tmp/confinelint-bench; it must
#                   stay the same between runs for the build-cache seed to hit)
#   BENCH_CACHE=DIR build-only GOCACHE kept between runs (default
#                   ~/.cache/confinelint-bench); only `go build` and the no-op
#                   warm vettool ever write to it, so it holds no vet result
#                   of a measured tool
#   QUIET_WAIT=D    before each cold run, wait up to D (default 10s) for the
#                   machine's other load to fall below 0.25 cores
#   BUILD_RETRIES=N rebuild confinelint up to N times, 60s apart, when the
#                   tree is momentarily broken (default 3)
set -euo pipefail
# Display pipelines end in `head`, whose early exit can kill the writer with
# SIGPIPE: they end in `|| true`, or pipefail would stop the run there.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
	REPEAT=${REPEAT:-1}
	PROFILE=${PROFILE:-0}
else
	REPEAT=${REPEAT:-3}
	PROFILE=${PROFILE:-1}
fi
MICRO=${MICRO:-1}
COLD=${COLD:-1}
INC=${INC:-1}
STANDALONE=${STANDALONE:-1}
STD=${STD:-1}
[[ $QUICK == 1 ]] && STD=${STD_QUICK:-0}
STD_MIN_GB=${STD_MIN_GB:-16}
BUILD_RETRIES=${BUILD_RETRIES:-3}
QUIET_WAIT=${QUIET_WAIT:-10s}
WORK=${BENCH_WORK:-${TMPDIR:-/tmp}/confinelint-bench}
STORE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/confinelint-bench}
SNAP=$STORE/gocache

USER_GOCACHE=$(go env GOCACHE)
T0=$(date +%s)
phase() { printf '\n== [%4ss] %s\n' $(($(date +%s) - T0)) "$*" >&2; }

mkdir -p "$WORK" "$STORE"
rm -rf "$WORK/bin" "$WORK/logs" "$WORK/corpus" "$WORK/raft" "$WORK"/gocache*
mkdir -p "$WORK/bin" "$WORK/logs"
RESULTS=$WORK/results.jsonl
: >"$RESULTS"

# ---------------------------------------------------------------- tools
phase "build tools into $WORK/bin"
for i in $(seq 0 "$BUILD_RETRIES"); do
	if (cd "$ROOT" && go build -o "$WORK/bin/confinelint" ./cmd/confinelint) &&
		(cd "$BENCH" && go build -o "$WORK/bin/" ./floor ./warm ./measure ./profile ./vetprof ./dropdriver); then
		break
	fi
	if [[ $i == "$BUILD_RETRIES" ]]; then
		echo "bench: build failed $((BUILD_RETRIES + 1)) times" >&2
		exit 1
	fi
	echo "bench: build failed, retrying in 60s" >&2
	sleep 60
done
MEASURE=$WORK/bin/measure

# ---------------------------------------------------------------- corpus
# The corpus module lives in bench/corpus (go.mod, go.sum, main.go with
# blank imports; no third-party source is committed). The raft module is
# replaced by a writable copy of itself, so that the incremental runs can
# edit one of its packages; the path is fixed so that compile results in
# the seeded build cache stay valid between invocations.
phase "corpus module in $WORK/corpus"
mkdir -p "$WORK/corpus"
cp "$BENCH/corpus/go.mod" "$BENCH/corpus/go.sum" "$BENCH/corpus/main.go" "$WORK/corpus/"
cd "$WORK/corpus"
RAFT_SRC=$(go mod download -json go.etcd.io/raft/v3 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$RAFT_SRC" "$WORK/raft"
chmod -R u+w "$WORK/raft"
go mod edit -replace=go.etcd.io/raft/v3=../raft
go mod tidy

if [[ $QUICK == 1 ]]; then
	MODRE='^(github\.com/twmb/franz-go|go\.etcd\.io/raft/v3)(/|$)'
else
	MODRE='^(github\.com/twmb/franz-go|go\.etcd\.io/etcd/server/v3|go\.etcd\.io/raft/v3|github\.com/IBM/sarama)(/|$)'
fi
mapfile -t PKGS < <(go list -deps -f '{{if .Module}}{{.ImportPath}} {{.Module.Path}}{{end}}' . |
	awk -v re="$MODRE" '$2 ~ re {print $1}')
NDEPS=$(go list -deps -test "${PKGS[@]}" | wc -l)
echo "packages vetted: ${#PKGS[@]} (${NDEPS} packages and test variants with dependencies)" >&2
printf '%s\n' "${PKGS[@]}" >"$WORK/packages.txt"

# ---------------------------------------------------------------- warm
# The snapshot is a GOCACHE holding every compile go vet needs and no vet
# result of a measured tool. `go build` compiles the packages; the no-op
# warm vettool makes go vet compile the rest (test variants, test-only
# dependencies) under a tool ID of its own.
phase "warm build cache $SNAP"
export GOCACHE=$SNAP
go build "${PKGS[@]}"
go vet -vettool="$WORK/bin/warm" "${PKGS[@]}" || {
	echo "bench: go vet with the no-op tool failed; the corpus does not vet cleanly" >&2
	exit 1
}
if [[ $STANDALONE == 1 && $STD == 1 ]]; then
	go build std
	go vet -vettool="$WORK/bin/warm" std
fi
du -sh "$SNAP" >&2

fresh() { # fresh DIR: a copy of the snapshot, vet-cold
	rm -rf "$1"
	cp -a "$SNAP" "$1"
}

vetcmd() { # vetcmd TOOL: the go vet command line for a tool
	case $1 in
	vet) echo go vet ;;
	confinelint) echo go vet -vettool="$WORK/bin/confinelint" ;;
	floor) echo go vet -vettool="$WORK/bin/floor" ;;
	esac
}

# ---------------------------------------------------------------- cold
# Alternating and repeated: round r runs the three tools in a rotated order,
# each from its own fresh copy of the snapshot.
TOOLS=(vet confinelint floor)
[[ $COLD == 1 ]] || REPEAT_COLD=0
phase "cold runs: ${REPEAT_COLD:-$REPEAT} rounds x ${TOOLS[*]}"
for r in $(seq 1 "${REPEAT_COLD:-$REPEAT}"); do
	for k in 0 1 2; do
		tool=${TOOLS[$(((k + r - 1) % 3))]}
		fresh "$WORK/gocache"
		"$MEASURE" quiet -max "$QUIET_WAIT"
		GOCACHE=$WORK/gocache "$MEASURE" run -out "$RESULTS" -label cold -tool "$tool" -round "$r" \
			-log "$WORK/logs/cold-$tool-$r.log" -- $(vetcmd "$tool") "${PKGS[@]}"
	done
done
rm -rf "$WORK/gocache"
for tool in "${TOOLS[@]}"; do
	log=$WORK/logs/cold-$tool-1.log
	[[ -f $log ]] || continue
	echo "  $tool: $(grep -c '' "$log") output lines; vet tool failures: $(grep -cE '^(panic:|fatal error:)|vet: .*(exit status|signal)' "$log" || true) (see $log)" >&2
done

# ---------------------------------------------------------------- incremental
# Warm vet cache, then edit one package and rerun. The edit appends a
# comment line with a fresh nonce to the package's first file, so that no
# position and no export data changes:
#   leaf:  go.etcd.io/raft/v3/rafttest, which no vetted package imports
#          (only raft's external tests do);
#   base:  go.etcd.io/raft/v3/raftpb, which raft and the etcd server packages
#          import.
#   shift: raftpb again, but the comment line is inserted at the top of the
#          file, shifting every position below it (the common edit): the
#          export data changes, so importers are recompiled and re-vetted.
if [[ $INC == 1 ]]; then
	phase "incremental runs"
	export GOCACHE=$WORK/gocache-inc
	fresh "$GOCACHE"
	for tool in vet confinelint; do
		$(vetcmd "$tool") "${PKGS[@]}" >"$WORK/logs/inc-prime-$tool.log" 2>&1 || true
		"$MEASURE" quiet -max 3s
		"$MEASURE" run -out "$RESULTS" -label nochange -tool "$tool" -round 1 \
			-log "$WORK/logs/nochange-$tool.log" -- $(vetcmd "$tool") "${PKGS[@]}"
	done
	nonce=0
	for target in leaf:go.etcd.io/raft/v3/rafttest base:go.etcd.io/raft/v3/raftpb shift:go.etcd.io/raft/v3/raftpb; do
		label=${target%%:*} pkg=${target#*:}
		file=$(go list -f '{{.Dir}}/{{index .GoFiles 0}}' "$pkg")
		cp "$file" "$WORK/orig.go"
		for r in $(seq 1 "$REPEAT"); do
			for tool in vet confinelint; do
				nonce=$((nonce + 1))
				if [[ $label == shift ]]; then
					sed -i "1i // confinelint bench edit $nonce $(date +%s%N)" "$file"
				else
					printf '\n// confinelint bench edit %s %s\n' "$nonce" "$(date +%s%N)" >>"$file"
				fi
				"$MEASURE" quiet -max 3s
				"$MEASURE" run -out "$RESULTS" -label "$label" -tool "$tool" -round "$r" \
					-log "$WORK/logs/$label-$tool-$r.log" -- $(vetcmd "$tool") "${PKGS[@]}"
			done
		done
		cp "$WORK/orig.go" "$file"
	done
	rm -rf "$GOCACHE"
fi

# ---------------------------------------------------------------- standalone
# The standalone driver (confinelint PKGS: go vet with confinelint itself as
# the tool, results in the go build cache) against the in-process driver it
# replaced (CONFINELINT_DRIVER=inprocess: every package loaded from source
# and analysed in one process), same binary, same packages:
#   standalone-cold  vet-cold, build cache warm, rounds alternating;
#   sa-nochange      rerun with the vet cache warm (the in-process driver has
#                    no cache: one run of it is the baseline);
#   sa-leaf          after a comment appended to raft/v3/rafttest;
#   std              all of std, once each (STD=1).
# dropdriver, the other design issue 16 measured (one process, each
# package's syntax and SSA dropped once its facts are exported; no cache),
# runs beside them cold and over std.
drv() { # drv TOOL: the command prefix for a driver (dropdriver prints text only)
	case $1 in
	inprocess) echo env CONFINELINT_DRIVER=inprocess "$WORK/bin/confinelint" -json ;;
	standalone) echo "$WORK/bin/confinelint" -json ;;
	dropdriver) echo "$WORK/bin/dropdriver" ;;
	esac
}
if [[ $STANDALONE == 1 ]]; then
	STOOLS=(inprocess standalone dropdriver)
	phase "standalone: ${REPEAT_COLD:-$REPEAT} rounds x ${STOOLS[*]}"
	for r in $(seq 1 "${REPEAT_COLD:-$REPEAT}"); do
		for k in 0 1 2; do
			tool=${STOOLS[$(((k + r - 1) % 3))]}
			fresh "$WORK/gocache"
			"$MEASURE" quiet -max "$QUIET_WAIT"
			GOCACHE=$WORK/gocache "$MEASURE" run -out "$RESULTS" -label standalone-cold -tool "$tool" -round "$r" \
				-log "$WORK/logs/standalone-$tool-$r.log" -- $(drv "$tool") "${PKGS[@]}"
		done
	done
	rm -rf "$WORK/gocache"
	if cmp -s "$WORK/logs/standalone-inprocess-1.log" "$WORK/logs/standalone-standalone-1.log"; then
		echo "  standalone and in-process output identical ($(grep -c '"analyzer"' "$WORK/logs/standalone-standalone-1.log") findings)" >&2
	else
		echo "  standalone and in-process output DIFFER: diff $WORK/logs/standalone-{inprocess,standalone}-1.log" >&2
	fi

	phase "standalone reruns"
	export GOCACHE=$WORK/gocache-sa
	fresh "$GOCACHE"
	$(drv standalone) "${PKGS[@]}" >"$WORK/logs/sa-prime.log" 2>&1 || true
	"$MEASURE" quiet -max 3s
	"$MEASURE" run -out "$RESULTS" -label sa-nochange -tool inprocess -round 1 \
		-log "$WORK/logs/sa-nochange-inprocess.log" -- $(drv inprocess) "${PKGS[@]}"
	for r in $(seq 1 "$REPEAT"); do
		"$MEASURE" quiet -max 3s
		"$MEASURE" run -out "$RESULTS" -label sa-nochange -tool standalone -round "$r" \
			-log "$WORK/logs/sa-nochange-$r.log" -- $(drv standalone) "${PKGS[@]}"
	done
	file=$(go list -f '{{.Dir}}/{{index .GoFiles 0}}' go.etcd.io/raft/v3/rafttest)
	cp "$file" "$WORK/orig.go"
	for r in $(seq 1 "$REPEAT"); do
		printf '\n// confinelint bench edit sa-%s %s\n' "$r" "$(date +%s%N)" >>"$file"
		"$MEASURE" quiet -max 3s
		"$MEASURE" run -out "$RESULTS" -label sa-leaf -tool standalone -round "$r" \
			-log "$WORK/logs/sa-leaf-$r.log" -- $(drv standalone) "${PKGS[@]}"
	done
	cp "$WORK/orig.go" "$file"
	rm -rf "$GOCACHE"
	export GOCACHE=$SNAP

	avail=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
	if [[ $STD == 1 ]]; then
		phase "standalone over std"
		for tool in ${STD_TOOLS:-standalone dropdriver inprocess}; do
			if [[ $tool == inprocess && $avail -lt $STD_MIN_GB ]]; then
				echo "  skipping the in-process driver over std: ${avail} GB available, it needs ~13 (STD_MIN_GB=$STD_MIN_GB)" >&2
				continue
			fi
			fresh "$WORK/gocache"
			"$MEASURE" quiet -max "$QUIET_WAIT"
			GOCACHE=$WORK/gocache "$MEASURE" run -out "$RESULTS" -label std -tool "$tool" -round 1 \
				-log "$WORK/logs/std-$tool.log" -- $(drv "$tool") std
		done
		rm -rf "$WORK/gocache"
		if [[ -f $WORK/logs/std-inprocess.log ]]; then
			cmp -s "$WORK/logs/std-inprocess.log" "$WORK/logs/std-standalone.log" &&
				echo "  std: standalone and in-process output identical" >&2 ||
				echo "  std: standalone and in-process output DIFFER: diff $WORK/logs/std-{inprocess,standalone}.log" >&2
		fi
	fi
fi

# ---------------------------------------------------------------- micro
if [[ $MICRO == 1 ]]; then
	phase "micro-benchmarks (internal/summary)"
	(cd "$ROOT" && GOCACHE=$USER_GOCACHE go test -run '^$' -bench . -benchmem -count 1 -timeout 15m \
			-cpuprofile "$WORK/micro.cpu.prof" -o "$WORK/bin/summary.test" ./internal/summary/ |
		tee "$WORK/micro.txt")
	go tool pprof -top -cum -nodecount 80 "$WORK/bin/summary.test" "$WORK/micro.cpu.prof" 2>/dev/null |
		tee "$WORK/micro.pprof.cum.txt" | grep -E 'confinelint|go/types|ssa\.' | head -25 || true
fi

# ---------------------------------------------------------------- profile
# 1. One process, the whole corpus from source (as the standalone mode
#    loads it), CPU- and allocation-profiled: where the time goes, summed
#    over every package including the standard library; the time per
#    analyzer is measured with actions run one at a time.
# 2. The vet tool as go vet runs it on the package with the largest RSS
#    (github.com/IBM/sarama with its tests): `go vet -work -x` keeps its
#    vet.cfg, and vetprof (confinelint plus a last analyzer that writes the
#    profiles) reruns it with a CPU profile and a heap profile taken while
#    every result is live.
PROFPKG=${PROFPKG:-github.com/IBM/sarama}
if [[ $PROFILE == 1 ]]; then
	phase "profile: in process over the corpus"
	(
		export GOCACHE=$USER_GOCACHE
		timeout 600 "$WORK/bin/profile" -seq -tool confinelint -cpuprofile "$WORK/corpus.cpu.prof" \
			-memprofile "$WORK/corpus.alloc.prof" \
			"${PKGS[@]}" >"$WORK/profile-corpus.txt" 2>"$WORK/logs/profile-corpus.log" || true
		cat "$WORK/profile-corpus.txt"
		echo "CPU, cumulative:"
		go tool pprof -top -cum -nodecount 70 "$WORK/bin/profile" "$WORK/corpus.cpu.prof" </dev/null 2>/dev/null |
			tee "$WORK/corpus.cpu.txt" | grep -E 'Duration|confinelint|buildssa|ssa\.|types\.' | head -30 || true
		echo "allocations (alloc_space), cumulative:"
		go tool pprof -sample_index=alloc_space -top -cum -nodecount 60 "$WORK/bin/profile" "$WORK/corpus.alloc.prof" </dev/null 2>/dev/null |
			tee "$WORK/corpus.alloc.txt" | grep -E 'Showing|confinelint|buildssa|ssa\.' | head -20 || true
	)
	phase "profile: vet tool on $PROFPKG"
	(
		export GOCACHE=$WORK/gocache-prof
		fresh "$GOCACHE"
		go vet -work -x -vettool="$WORK/bin/confinelint" "$PROFPKG" >"$WORK/logs/profile-vet-x.log" 2>&1 || true
		vwork=$(sed -n 's/^WORK=//p' "$WORK/logs/profile-vet-x.log" | head -1) || true
		cfg=$(grep -l "\"ID\": \"$PROFPKG\"," "$vwork"/*/vet.cfg | xargs grep -l '"VetxOnly": false' | head -1) || true
		if [[ -n $cfg ]]; then
			"$MEASURE" run -label one-package -tool confinelint -log /dev/null -- "$WORK/bin/confinelint" "$cfg"
			VETPROF_CPU=$WORK/vet.cpu.prof VETPROF_MEM=$WORK/vet.heap.prof \
				"$WORK/bin/vetprof" "$cfg" >/dev/null 2>&1 || true
			echo "CPU, cumulative:"
			go tool pprof -top -cum -nodecount 60 "$WORK/bin/vetprof" "$WORK/vet.cpu.prof" </dev/null 2>/dev/null |
				tee "$WORK/vet.cpu.txt" | grep -E 'Duration|confinelint|buildssa|types\.' | head -25 || true
			echo "heap in use after the last analyzer, by allocation site:"
			go tool pprof -sample_index=inuse_space -top -nodecount 12 "$WORK/bin/vetprof" "$WORK/vet.heap.prof" </dev/null 2>/dev/null |
				tee "$WORK/vet.heap.txt" | tail -13
		else
			echo "bench: no vet.cfg for $PROFPKG found in $vwork" >&2
		fi
		rm -rf "$vwork" "$GOCACHE"
	)
fi

# ---------------------------------------------------------------- summary
phase "summary"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; $(go version)"
	echo "packages vetted: ${#PKGS[@]} ($NDEPS with dependencies and test variants); REPEAT=$REPEAT QUICK=$QUICK"
	echo
	"$MEASURE" summary -in "$RESULTS"
} | tee "$WORK/summary.md"
echo >&2
echo "results: $WORK/summary.md (raw: $RESULTS, logs: $WORK/logs)" >&2
