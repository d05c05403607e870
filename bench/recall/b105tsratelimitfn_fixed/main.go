// Project: tailscale/tailscale (types/logger/logger.go RateLimitedFnWithClock, types/logger/tokenbucket.go), June 2021.
// Bug: commit 19c3e6cc made RateLimitedFn's returned Logf hold the limiter mutex for the whole call, including the call to the wrapped logf, so when formatting the arguments re-enters the same rate-limited logger (a fmt.Stringer or ArgWriter argument whose String method logs), the goroutine blocks on the limiter mutex it already holds (PR #2247 "types/logger: fix deadlock RateLimitedFn reentrancy", which moves the bookkeeping into a judge closure and calls logf after unlocking; the reentrant Stringer follows the regression test added with the fix, the production caller is approximate).
package main

import (
	"container/list"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Logf is the basic Tailscale logger type: a printf-like func.
type Logf func(format string, args ...any)

// WithPrefix wraps f, prefixing each format with the provided prefix.
func WithPrefix(f Logf, prefix string) Logf {
	return func(format string, args ...any) {
		f(prefix+format, args...)
	}
}

type tokenBucket struct {
	remaining int
	max       int
	tick      time.Duration
	t         time.Time
}

func newTokenBucket(tick time.Duration, max int, now time.Time) *tokenBucket {
	return &tokenBucket{max, max, tick, now}
}

func (tb *tokenBucket) Get() bool {
	if tb.remaining > 0 {
		tb.remaining--
		return true
	}
	return false
}

func (tb *tokenBucket) AdvanceTo(t time.Time) {
	diff := t.Sub(tb.t)
	if diff < tb.tick {
		return
	}
	tb.remaining = min(tb.max, tb.remaining+int(diff/tb.tick))
	tb.t = t
}

type limitData struct {
	bucket   *tokenBucket  // the token bucket for this format string
	nBlocked int           // number of messages skipped
	ele      *list.Element // list element used to access this string in the cache
}

var disableRateLimit = os.Getenv("TS_DEBUG_LOG_RATE") == "all"

// rateFree are format string substrings that are exempt from rate limiting.
var rateFree = []string{"magicsock: disco: ", "magicsock: ParseEndpoint:"}

// RateLimitedFn is a wrapper for RateLimitedFnWithClock that includes the
// current time automatically.
func RateLimitedFn(logf Logf, f time.Duration, burst int, maxCache int) Logf {
	return RateLimitedFnWithClock(logf, f, burst, maxCache, time.Now)
}

func RateLimitedFnWithClock(logf Logf, f time.Duration, burst int, maxCache int, timeNow func() time.Time) Logf {
	if disableRateLimit {
		return logf
	}
	var (
		mu       sync.Mutex
		msgLim   = make(map[string]*limitData) // keyed by logf format
		msgCache = list.New()                  // a rudimentary LRU that limits the size of the map
	)

	type verdict int
	const (
		allow verdict = iota
		warn
		block
	)

	// judge does the bookkeeping under mu; logf is only called after
	// mu is released, so formatting may re-enter this logger.
	judge := func(format string) (v verdict, unblocked int) {
		mu.Lock()
		defer mu.Unlock()
		rl, ok := msgLim[format]
		if ok {
			msgCache.MoveToFront(rl.ele)
		} else {
			rl = &limitData{
				bucket: newTokenBucket(f, burst, timeNow()),
				ele:    msgCache.PushFront(format),
			}
			msgLim[format] = rl
			if msgCache.Len() > maxCache {
				delete(msgLim, msgCache.Back().Value.(string))
				msgCache.Remove(msgCache.Back())
			}
		}
		rl.bucket.AdvanceTo(timeNow())

		// Make sure there's enough room for at least a few more logs
		// before we unblock, so we don't alternate between blocking
		// and unblocking.
		if rl.nBlocked > 0 && rl.bucket.remaining >= 2 {
			unblocked = rl.nBlocked
			rl.nBlocked = 0
		}
		if rl.nBlocked == 0 && rl.bucket.Get() {
			return allow, unblocked
		} else if rl.nBlocked == 0 {
			rl.nBlocked++
			return warn, unblocked
		}
		rl.nBlocked++
		return block, unblocked
	}

	return func(format string, args ...any) {
		for _, sub := range rateFree {
			if strings.Contains(format, sub) {
				logf(format, args...)
				return
			}
		}
		v, unblocked := judge(format)
		if unblocked > 0 {
			logf("[RATELIMIT] format(%q) (%d dropped)", format, unblocked)
		}
		switch v {
		case allow:
			logf(format, args...)
		case warn:
			logf("[RATELIMIT] format(%q)", format)
		}
	}
}

// stringerFunc is a fmt.Stringer whose String method logs through the same
// rate-limited logger while its value is being formatted.
type stringerFunc func() string

func (f stringerFunc) String() string { return f() }

func main() {
	base := Logf(func(format string, args ...any) {
		fmt.Printf(format+"\n", args...)
	})
	rlogf := RateLimitedFn(base, time.Second, 10, 10)
	logf := WithPrefix(rlogf, "wgengine: ")

	logf("Hello.")
	logf("Hello, %v", stringerFunc(func() string {
		logf("Hello again")
		return "world"
	}))
	fmt.Println("done")
}
