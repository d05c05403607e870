// Project: etcd (server/auth, simple_token.go)
// Bug: tokenSimple.disable holds simpleTokensMu while stopping the TTL keeper
// and waiting for its donec; the keeper shares that mutex (tm.mu) and must take
// it to drop the remaining tokens before it can close donec.
// Fix: detach the keeper and reset tokens under the lock, stop it after unlocking.
package b26etcdsimpletoken_fixed

import (
	"fmt"
	"log"
	"sync"
	"testing"
	"time"
)

var simpleTokenTTLResolution = 1 * time.Second

const simpleTokenTTL = 5 * time.Minute

type simpleTokenTTLKeeper struct {
	tokens          map[string]time.Time
	donec           chan struct{}
	stopc           chan struct{}
	deleteTokenFunc func(string)
	mu              *sync.Mutex
}

func (tm *simpleTokenTTLKeeper) stop() {
	select {
	case tm.stopc <- struct{}{}:
	case <-tm.donec:
	}
	<-tm.donec
}

func (tm *simpleTokenTTLKeeper) addSimpleToken(token string) {
	tm.tokens[token] = time.Now().Add(simpleTokenTTL)
}

func (tm *simpleTokenTTLKeeper) resetSimpleToken(token string) {
	if _, ok := tm.tokens[token]; ok {
		tm.tokens[token] = time.Now().Add(simpleTokenTTL)
	}
}

func (tm *simpleTokenTTLKeeper) run() {
	tokenTicker := time.NewTicker(simpleTokenTTLResolution)
	defer func() {
		tokenTicker.Stop()
		close(tm.donec)
	}()
	for {
		select {
		case <-tokenTicker.C:
			nowtime := time.Now()
			tm.mu.Lock()
			for t, tokenendtime := range tm.tokens {
				if nowtime.After(tokenendtime) {
					tm.deleteTokenFunc(t)
					delete(tm.tokens, t)
				}
			}
			tm.mu.Unlock()
		case <-tm.stopc:
			tm.mu.Lock()
			for t := range tm.tokens {
				tm.deleteTokenFunc(t)
				delete(tm.tokens, t)
			}
			tm.mu.Unlock()
			return
		}
	}
}

type tokenSimple struct {
	indexWaiter       func(uint64) <-chan struct{}
	simpleTokenKeeper *simpleTokenTTLKeeper
	simpleTokensMu    sync.Mutex
	simpleTokens      map[string]string // token -> username
}

func newTokenProviderSimple(indexWaiter func(uint64) <-chan struct{}) *tokenSimple {
	return &tokenSimple{
		simpleTokens: make(map[string]string),
		indexWaiter:  indexWaiter,
	}
}

func (t *tokenSimple) enable() {
	delf := func(tk string) {
		if username, ok := t.simpleTokens[tk]; ok {
			log.Printf("deleting token %s for user %s", tk, username)
			delete(t.simpleTokens, tk)
		}
	}
	t.simpleTokenKeeper = &simpleTokenTTLKeeper{
		tokens:          make(map[string]time.Time),
		donec:           make(chan struct{}),
		stopc:           make(chan struct{}),
		deleteTokenFunc: delf,
		mu:              &t.simpleTokensMu,
	}
	go t.simpleTokenKeeper.run()
}

func (t *tokenSimple) disable() {
	t.simpleTokensMu.Lock()
	tk := t.simpleTokenKeeper
	t.simpleTokenKeeper = nil
	t.simpleTokens = make(map[string]string) // invalidate all tokens
	t.simpleTokensMu.Unlock()
	if tk != nil {
		tk.stop()
	}
}

func (t *tokenSimple) assignSimpleTokenToUser(username, token string) {
	t.simpleTokensMu.Lock()
	defer t.simpleTokensMu.Unlock()
	if t.simpleTokenKeeper == nil {
		return
	}
	if _, ok := t.simpleTokens[token]; ok {
		log.Panicf("token %s is already used", token)
	}
	t.simpleTokens[token] = username
	t.simpleTokenKeeper.addSimpleToken(token)
}

func (t *tokenSimple) info(token string, revision uint64) (string, bool) {
	t.simpleTokensMu.Lock()
	defer t.simpleTokensMu.Unlock()
	username, ok := t.simpleTokens[token]
	if ok && t.simpleTokenKeeper != nil {
		t.simpleTokenKeeper.resetSimpleToken(token)
	}
	return username, ok
}

type authStore struct {
	enabledMu     sync.RWMutex
	enabled       bool
	revision      uint64
	tokenProvider *tokenSimple
}

func (as *authStore) AuthEnable() {
	as.enabledMu.Lock()
	defer as.enabledMu.Unlock()
	as.enabled = true
	as.tokenProvider.enable()
	as.revision++
}

func (as *authStore) AuthDisable() {
	as.enabledMu.Lock()
	defer as.enabledMu.Unlock()
	if !as.enabled {
		return
	}
	as.enabled = false
	as.tokenProvider.disable()
	as.revision++
}

func TestProbe(t *testing.T) {
	simpleTokenTTLResolution = 10 * time.Millisecond
	as := &authStore{tokenProvider: newTokenProviderSimple(nil)}
	as.AuthEnable()
	for i := 0; i < 3; i++ {
		as.tokenProvider.assignSimpleTokenToUser("root", fmt.Sprintf("tok.%d", i))
	}
	if u, ok := as.tokenProvider.info("tok.1", as.revision); !ok || u != "root" {
		t.Fatalf("unexpected token info %q %v", u, ok)
	}
	as.AuthDisable()
	if _, ok := as.tokenProvider.info("tok.1", as.revision); ok {
		t.Fatal("token survived auth disable")
	}
}
