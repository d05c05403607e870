#!/usr/bin/env bash
# ci-sweep.sh: the robustness sweep over the standard library (std, tests
# included), as CI runs it. Builds confinelint, runs it standalone over std
# and counts panics, positionless, duplicated and address-leaking findings
# (scripts/sweep); exits non-zero if any count is not zero or the sweep
# itself fails.
#
# The standalone sweep uses the standalone driver, which runs go vet with
# confinelint as the tool: one process per package, memory bounded by the
# widest package (all of std: 331 MiB for the whole process tree, 178 s of
# CPU, bench/RESULTS.md; the in-process driver needed 12.5 GB), results
# cached in the go build cache, so a CI job that keeps GOCACHE reruns only
# what changed.
# CONFINELINT_DRIVER is cleared so that the sweep cannot fall back to the
# in-process driver (which needs about 13 GB for std).
#
# The plain go vet -vettool sweep over std is off by default: it checks go
# vet's own text output of the same tool, and on 2 cores with a cold cache
# on a loaded machine it took 9m53s, over CI's 8-minute budget. Set
# CI_SWEEP_VET=1 to add it.
#
# Usage: scripts/ci-sweep.sh          (env: CI_SWEEP_VET=1, SWEEP_BIN)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SWEEP_BIN:-$(mktemp -d)/confinelint}
go build -o "$BIN" ./cmd/confinelint
VET=false
[ "${CI_SWEEP_VET:-0}" = 1 ] && VET=true
env -u CONFINELINT_DRIVER go run ./scripts/sweep -bin "$BIN" -vet="$VET" std
