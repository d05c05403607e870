// Project: ethereum/go-ethereum (accounts/manager.go), geth v1.9.x, fixed in 2020 by adding Manager.walletsNoLock (approximate).
// Bug: Manager.Wallet(url) took am.lock.RLock and then called the exported am.Wallets(), which read-locks am.lock again; when a backend wallet event arrives in between, the update loop's am.lock.Lock() is queued and the nested RLock blocks behind it, so the RPC caller and the account manager's update loop deadlock.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

var ErrUnknownWallet = errors.New("unknown wallet")

type URL struct{ Scheme, Path string }

func (u URL) String() string   { return u.Scheme + "://" + u.Path }
func (u URL) Cmp(url URL) int  { return strings.Compare(u.String(), url.String()) }
func (u URL) equal(o URL) bool { return u.Scheme == o.Scheme && u.Path == o.Path }

func parseURL(url string) (URL, error) {
	time.Sleep(50 * time.Millisecond) // test hook: widen the window between the two read locks
	parts := strings.Split(url, "://")
	if len(parts) != 2 || parts[0] == "" {
		return URL{}, errors.New("protocol scheme missing")
	}
	return URL{Scheme: parts[0], Path: parts[1]}, nil
}

type Wallet interface {
	URL() URL
	Status() (string, error)
	Contains(account string) bool
}

type WalletEventType int

const (
	WalletArrived WalletEventType = iota
	WalletDropped
)

type WalletEvent struct {
	Wallet Wallet
	Kind   WalletEventType
}

// Backend is a wallet provider (keystore, usbwallet, ...).
type Backend interface {
	Wallets() []Wallet
	Subscribe(sink chan<- WalletEvent)
}

type keystoreWallet struct{ path string }

func (w *keystoreWallet) URL() URL                { return URL{Scheme: "keystore", Path: w.path} }
func (w *keystoreWallet) Status() (string, error) { return "Locked", nil }
func (w *keystoreWallet) Contains(a string) bool  { return strings.HasSuffix(w.path, a) }

// KeyStore is a minimal keystore backend firing wallet events on import.
type KeyStore struct {
	mu      sync.RWMutex
	wallets []Wallet
	sinks   []chan<- WalletEvent
}

func (ks *KeyStore) Wallets() []Wallet {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return append([]Wallet(nil), ks.wallets...)
}

func (ks *KeyStore) Subscribe(sink chan<- WalletEvent) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.sinks = append(ks.sinks, sink)
}

func (ks *KeyStore) Import(path string) {
	w := &keystoreWallet{path: path}
	ks.mu.Lock()
	ks.wallets = append(ks.wallets, w)
	sinks := append([]chan<- WalletEvent(nil), ks.sinks...)
	ks.mu.Unlock()
	for _, s := range sinks {
		s <- WalletEvent{Wallet: w, Kind: WalletArrived}
	}
}

// Manager is the account manager fed by the backends' wallet events.
type Manager struct {
	updates chan WalletEvent
	wallets []Wallet
	quit    chan struct{}
	lock    sync.RWMutex
}

func NewManager(backends ...Backend) *Manager {
	var wallets []Wallet
	updates := make(chan WalletEvent, 4)
	for _, backend := range backends {
		wallets = merge(wallets, backend.Wallets()...)
		backend.Subscribe(updates)
	}
	am := &Manager{updates: updates, wallets: wallets, quit: make(chan struct{})}
	go am.update()
	return am
}

// update is the wallet event loop keeping the cache of wallets up to date.
func (am *Manager) update() {
	for {
		select {
		case event := <-am.updates:
			am.lock.Lock()
			switch event.Kind {
			case WalletArrived:
				am.wallets = merge(am.wallets, event.Wallet)
			case WalletDropped:
				am.wallets = drop(am.wallets, event.Wallet)
			}
			am.lock.Unlock()
		case <-am.quit:
			return
		}
	}
}

func (am *Manager) Close() { close(am.quit) }

// Wallets returns all signer accounts registered under this account manager.
func (am *Manager) Wallets() []Wallet {
	am.lock.RLock()
	defer am.lock.RUnlock()

	return am.walletsNoLock()
}

// walletsNoLock returns all registered wallets. Callers must hold am.lock.
func (am *Manager) walletsNoLock() []Wallet {
	cpy := make([]Wallet, len(am.wallets))
	copy(cpy, am.wallets)
	return cpy
}

// Wallet retrieves the wallet associated with a particular URL.
func (am *Manager) Wallet(url string) (Wallet, error) {
	am.lock.RLock()
	defer am.lock.RUnlock()
	parsed, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	for _, wallet := range am.walletsNoLock() {
		if wallet.URL().equal(parsed) {
			return wallet, nil
		}
	}
	return nil, ErrUnknownWallet
}

func merge(slice []Wallet, wallets ...Wallet) []Wallet {
	for _, wallet := range wallets {
		n := sort.Search(len(slice), func(i int) bool { return slice[i].URL().Cmp(wallet.URL()) >= 0 })
		slice = append(slice[:n], append([]Wallet{wallet}, slice[n:]...)...)
	}
	return slice
}

func drop(slice []Wallet, wallets ...Wallet) []Wallet {
	for _, wallet := range wallets {
		n := sort.Search(len(slice), func(i int) bool { return slice[i].URL().Cmp(wallet.URL()) >= 0 })
		if n < len(slice) {
			slice = append(slice[:n], slice[n+1:]...)
		}
	}
	return slice
}

func main() {
	ks := &KeyStore{wallets: []Wallet{&keystoreWallet{path: "/data/keystore/UTC--a"}}}
	am := NewManager(ks)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // personal_openWallet / eth_sign RPC path
		defer wg.Done()
		w, err := am.Wallet("keystore:///data/keystore/UTC--a")
		fmt.Println("wallet:", w != nil, err)
	}()
	go func() { // personal_importRawKey while the RPC above is running
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		ks.Import("/data/keystore/UTC--b")
	}()
	wg.Wait()
	fmt.Println("wallets:", len(am.Wallets()))
	am.Close()
}
