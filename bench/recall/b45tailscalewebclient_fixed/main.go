// Fixed version (PR #10073 applied).
// Project: tailscale/tailscale, tailscaled 1.53/1.54 development (November
// 2023), when the "tailscale set --webclient" preference was added.
// Files/functions: ipn/ipnlocal/local.go (LocalBackend.EditPrefs,
// editPrefsLockedOnEntry, setPrefsLockedOnEntry, lockAndGetUnlock,
// unlockOnce), ipn/ipnlocal/web_client.go (LocalBackend.WebClientShutdown);
// reached from the LocalAPI PATCH /localapi/v0/prefs handler.
// Issue/PR: tailscale/tailscale PR #10073 "ipn/ipnlocal: prevent deadlock on
// WebClientShutdown" (updates tailscale/corp#14335).
//
// EditPrefs takes b.mu through lockAndGetUnlock and hands the unlockOnce to
// setPrefsLockedOnEntry, which keeps the lock while it compares the old and
// new prefs and reacts to each change. When RunWebClient goes from true to
// false it calls b.WebClientShutdown() to stop the web UI on port 5252. That
// function's first statement is b.mu.Lock() (it closes the web client
// listeners kept in b.webClientListeners before shutting the server down), so
// the LocalAPI goroutine blocks on the mutex it holds, and from then on every
// LocalAPI call, netmap update and status query of tailscaled hangs. The fix
// runs it as "go b.WebClientShutdown()", exactly as the SSH server's Shutdown
// was already run a few lines above, so it proceeds after
// setPrefsLockedOnEntry releases b.mu.
package main

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

type Prefs struct {
	WantRunning  bool
	RunSSH       bool
	RunWebClient bool
}

func (p *Prefs) ShouldSSHBeRunning() bool       { return p.WantRunning && p.RunSSH }
func (p *Prefs) ShouldWebClientBeRunning() bool { return p.WantRunning && p.RunWebClient }

type MaskedPrefs struct {
	Prefs
	RunSSHSet       bool
	RunWebClientSet bool
}

func (mp *MaskedPrefs) ApplyEdits(p *Prefs) {
	if mp.RunSSHSet {
		p.RunSSH = mp.RunSSH
	}
	if mp.RunWebClientSet {
		p.RunWebClient = mp.RunWebClient
	}
}

type webServer struct{ shutdown atomic.Bool }

func (s *webServer) Shutdown() { s.shutdown.Store(true) }

type webClient struct{ server *webServer }

type SSHServer interface{ Shutdown() }

type LocalBackend struct {
	mu                 sync.Mutex
	prefs              *Prefs
	sshServer          SSHServer
	webClient          webClient
	webClientListeners map[netip.AddrPort]net.Listener
	logf               func(format string, args ...any)
}

// unlockOnce is a func that unlocks only once.
type unlockOnce func()

func (b *LocalBackend) lockAndGetUnlock() (unlock unlockOnce) {
	b.mu.Lock()
	var unlocked atomic.Bool
	return func() {
		if unlocked.CompareAndSwap(false, true) {
			b.mu.Unlock()
		}
	}
}

func (u unlockOnce) UnlockEarly() { u() }

func (b *LocalBackend) EditPrefs(mp *MaskedPrefs) (Prefs, error) {
	unlock := b.lockAndGetUnlock()
	defer unlock()
	return b.editPrefsLockedOnEntry(mp, unlock)
}

func (b *LocalBackend) editPrefsLockedOnEntry(mp *MaskedPrefs, unlock unlockOnce) (Prefs, error) {
	p0 := *b.prefs
	p1 := p0
	mp.ApplyEdits(&p1)
	if p1 == p0 {
		return p0, nil
	}
	return b.setPrefsLockedOnEntry(&p1, unlock), nil
}

func (b *LocalBackend) setPrefsLockedOnEntry(newp *Prefs, unlock unlockOnce) Prefs {
	defer unlock() // for error paths

	oldp := b.prefs
	if oldp.ShouldSSHBeRunning() && !newp.ShouldSSHBeRunning() {
		if b.sshServer != nil {
			go b.sshServer.Shutdown()
			b.sshServer = nil
		}
	}
	if oldp.ShouldWebClientBeRunning() && !newp.ShouldWebClientBeRunning() {
		go b.WebClientShutdown()
	}
	b.prefs = newp
	prefs := *newp

	unlock.UnlockEarly()
	b.logf("EditPrefs: %+v", prefs)
	return prefs
}

// WebClientShutdown shuts down any running b.webClient servers and
// clears out b.webClient state. WebClientShutdown obtains the b.mu lock.
func (b *LocalBackend) WebClientShutdown() {
	b.mu.Lock()
	server := b.webClient.server
	b.webClient.server = nil
	for ap, ln := range b.webClientListeners {
		ln.Close()
		delete(b.webClientListeners, ap)
	}
	b.mu.Unlock() // release lock before shutdown
	if server != nil {
		server.Shutdown()
		b.logf("WebClientShutdown: shut down web ui")
	}
}

// serveEditPrefs is the LocalAPI PATCH /localapi/v0/prefs handler.
func serveEditPrefs(b *LocalBackend, mp *MaskedPrefs) {
	prefs, err := b.EditPrefs(mp)
	fmt.Println("PATCH /localapi/v0/prefs ->", prefs, err)
}

func main() {
	b := &LocalBackend{
		prefs:              &Prefs{WantRunning: true, RunWebClient: true},
		webClient:          webClient{server: &webServer{}},
		webClientListeners: map[netip.AddrPort]net.Listener{},
		logf:               func(format string, args ...any) { fmt.Printf(format+"\n", args...) },
	}
	done := make(chan struct{})
	go func() { // tailscale set --webclient=false
		serveEditPrefs(b, &MaskedPrefs{Prefs: Prefs{RunWebClient: false}, RunWebClientSet: true})
		close(done)
	}()
	<-done
	time.Sleep(10 * time.Millisecond)
}
