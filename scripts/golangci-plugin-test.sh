#!/usr/bin/env bash
# golangci-plugin-test.sh: build golangci-lint v2 with confinelint's module
# plugin (plugin/golangci) and check that its three linters report, are
# configured and are //nolint-ed on their own.
#
# Needs only Go, git and the Go module proxy: `golangci-lint custom` clones
# https://github.com/golangci/golangci-lint.git, so the script serves that
# URL from a local git repository made from the module cache copy of
# golangci-lint (GIT_CONFIG_* url.insteadOf, which golangci-lint passes to
# git). Idempotent and cache-friendly: everything lives in $WORK (default
# ~/.cache/confinelint-gcl); the golangci-lint binary, the local repository
# and the custom binary are reused while their inputs are unchanged.
#
# Usage: scripts/golangci-plugin-test.sh     (env: WORK, GCL_VERSION)
#
# Time on 2 cores: cold module and build caches about 7 min (installing
# golangci-lint about 6, golangci-lint custom about 1); after a change to
# the plugin module's non-test Go files about 30 s; unchanged about 4 s.
set -euo pipefail

GCL_VERSION=${GCL_VERSION:-v2.15.0}
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/confinelint-gcl}
mkdir -p "$WORK/bin"
export GOLANGCI_LINT_CACHE="$WORK/lint-cache"
START=$SECONDS
step() { printf '== [%4ss] %s\n' "$((SECONDS - START))" "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

# 1. golangci-lint itself, from the module proxy.
GCL=$WORK/bin/golangci-lint
if ! "$GCL" version 2>/dev/null | grep -q "version ${GCL_VERSION#v} "; then
	step "go install golangci-lint@$GCL_VERSION"
	GOBIN=$WORK/bin go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GCL_VERSION"
fi
step "golangci-lint: $("$GCL" version)"

# 2. A local git repository standing in for github.com/golangci/golangci-lint.
SRC=$WORK/golangci-lint-$GCL_VERSION.git
if ! git -C "$SRC" rev-parse -q --verify "refs/tags/$GCL_VERSION" >/dev/null 2>&1; then
	step "local golangci-lint repository at $SRC"
	MODDIR=$(go mod download -json "github.com/golangci/golangci-lint/v2@$GCL_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$MODDIR" ] || fail "module cache has no golangci-lint $GCL_VERSION"
	rm -rf "$SRC" && cp -R "$MODDIR" "$SRC" && chmod -R u+w "$SRC"
	git -C "$SRC" init -q
	git -C "$SRC" add -A
	git -C "$SRC" -c user.name=confinelint -c user.email=ci@confinelint.invalid \
		-c commit.gpgsign=false commit -q -m "golangci-lint $GCL_VERSION from the module cache"
	git -C "$SRC" tag "$GCL_VERSION"
fi
export GIT_CONFIG_COUNT=1
export GIT_CONFIG_KEY_0="url.file://$SRC.insteadOf"
export GIT_CONFIG_VALUE_0=https://github.com/golangci/golangci-lint.git

# 3. The custom binary, rebuilt only when the plugin module's source changed.
BUILD=$WORK/build
CUSTOM=$WORK/bin/custom-gcl
mkdir -p "$BUILD"
STAMP=$( (cd "$REPO" && find . -path ./examples -prune -o -path '*/testdata' -prune -o \
	\( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -type f -print | LC_ALL=C sort |
	while read -r f; do sha256 "$f"; done; echo "$GCL_VERSION") | sha256 | cut -c1-16)
if [ ! -x "$CUSTOM" ] || [ "$(cat "$WORK/custom.stamp" 2>/dev/null)" != "$STAMP" ]; then
	step "golangci-lint custom (plugin module at $REPO)"
	cat >"$BUILD/.custom-gcl.yml" <<YML
version: $GCL_VERSION
name: custom-gcl
destination: $WORK/bin
plugins:
  - module: github.com/confinelint/confinelint
    import: github.com/confinelint/confinelint/plugin/golangci
    path: $REPO
YML
	(cd "$BUILD" && "$GCL" custom -v) || fail "golangci-lint custom"
	echo "$STAMP" >"$WORK/custom.stamp"
fi
step "custom binary: $("$CUSTOM" version)"

# 4. A tiny consumer module with one bug per linter and a //nolint.
MOD=$WORK/consumer
rm -rf "$MOD" && mkdir -p "$MOD"
cp "$REPO/plugin/golangci/example/.golangci.yml" "$MOD/.golangci.yml"
cat >"$MOD/go.mod" <<'GO'
module example.com/consumer

go 1.26
GO
cat >"$MOD/consumer.go" <<'GO'
package consumer

import "sync"

// Consumer has one bug for each linter.
type Consumer struct {
	a, b sync.Mutex
	//confined:guardedby nosuch
	n int
	//nolint:lockorder // silenced on purpose: must not be reported
	//confined:guardedby nosuch2
	m int
	//confined:gaurdedby a
	k int
	//confined:control poll
	inflight int
}

// AB takes a then b.
func (c *Consumer) AB() {
	c.a.Lock()
	c.b.Lock()
	c.b.Unlock()
	c.a.Unlock()
}

// BA takes b then a: a lock-order inversion with AB.
func (c *Consumer) BA() {
	c.b.Lock()
	c.a.Lock()
	c.a.Unlock()
	c.b.Unlock()
}

//confined:commit poll
type notAFunc int

//confined:entry poll
func (c *Consumer) run() {
	for {
		c.inflight++
	}
}

// Reset touches poll's state from a fresh goroutine.
func (c *Consumer) Reset() {
	go func() { c.inflight = 0 }()
}

// ResetQuiet does the same, silenced for confined only.
func (c *Consumer) ResetQuiet() {
	go func() {
		c.inflight = 1 //nolint:confined // silenced on purpose: must not be reported
	}()
}
GO
n=$(cd "$MOD" && "$CUSTOM" linters 2>&1 | grep -cE '^(confined|lockorder|revokepath):') || true
[ "$n" = 3 ] || fail "custom-gcl linters lists $n of confined, lockorder, revokepath"
echo "ok: custom-gcl has the linters confined, lockorder and revokepath"
line() { grep -n -F -- "$1" "$MOD/consumer.go" | head -1 | cut -d: -f1; }

step "custom-gcl run on $MOD"
OUT=$WORK/consumer.out
(cd "$MOD" && "$CUSTOM" run ./... >"$OUT" 2>&1) && rc=0 || rc=$?
cat "$OUT"
[ "$rc" = 1 ] || fail "custom-gcl run exited $rc, want 1 (issues found)"
failed=0
expect() { # expect LINTER REGEXP: a finding of LINTER matching REGEXP
	if grep -E "$2.*\($1\)\$" "$OUT" >/dev/null; then echo "ok: $1 reports $2"; else
		echo "MISSING: $1 should report $2" >&2; failed=1; fi
}
expect confined "consumer.go:$(line gaurdedby):.*\[directive-unknown\]"
expect lockorder "consumer.go:$(line 'guardedby nosuch'):.*\[directive-lock\]"
expect revokepath "consumer.go:$(line 'commit poll'):.*\[directive-placement\]"
expect lockorder '\[lock-order\]'
expect confined '\[foreign-access\]'
if grep -q "consumer.go:$(line nosuch2):" "$OUT"; then
	echo "MISSING: //nolint:lockorder did not silence the finding on line $(line nosuch2)" >&2; failed=1
else echo "ok: //nolint:lockorder silences lockorder"; fi
if grep -q "consumer.go:$(line 'c.inflight = 1'):" "$OUT"; then
	echo "MISSING: //nolint:confined did not silence the finding on line $(line 'c.inflight = 1')" >&2; failed=1
else echo "ok: //nolint:confined silences confined"; fi

# 5. Settings are decoded strictly.
sed 's/^          async:$/          asynch:/' "$MOD/.golangci.yml" >"$MOD/bad.yml"
if (cd "$MOD" && "$CUSTOM" run -c bad.yml ./... >"$WORK/bad.out" 2>&1); then
	echo "MISSING: an unknown setting must be an error" >&2; failed=1
elif grep -q '"asynch"' "$WORK/bad.out"; then echo 'ok: unknown setting "asynch" rejected by name'; else
	cat "$WORK/bad.out"; echo "MISSING: the error must name the unknown setting" >&2; failed=1
fi

# 6. The example consumer in examples/, when present.
if [ -f "$REPO/examples/go.mod" ]; then
	step "custom-gcl run on examples/"
	{ cat "$REPO/plugin/golangci/example/.golangci.yml"; printf 'run:\n  relative-path-mode: wd\n'; } >"$WORK/examples.yml"
	(cd "$REPO/examples" && "$CUSTOM" run -c "$WORK/examples.yml" ./... >"$WORK/examples.out" 2>&1) && rc=0 || rc=$?
	cat "$WORK/examples.out"
	[ "$rc" = 1 ] || { echo "MISSING: examples/: exit $rc, want 1 (issues found)" >&2; failed=1; }
	grep -q '^consumer/consumer.go:.*guardeby.*\[directive-unknown\] (confined)$' "$WORK/examples.out" ||
		{ echo "MISSING: examples/: the misspelled //confined:guardeby" >&2; failed=1; }
	grep -q '^consumer/consumer.go:.*\[inline-commit\] (revokepath)$' "$WORK/examples.out" ||
		{ echo "MISSING: examples/: the inline commit in onRevoked" >&2; failed=1; }
fi

step "done"
[ "$failed" = 0 ] || fail "golangci-lint plugin test (see MISSING above)"
echo PASS
