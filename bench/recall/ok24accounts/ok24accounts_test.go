// Pattern: bank accounts of a single type created in a loop; Transfer locks
// the two accounts in ascending ID order. While both account locks are held
// the package logger is called with %d operands and an error whose Error()
// reads only immutable fields, and a nil-checked transfer hook records into
// a separate ledger whose lock is always taken after account locks.
package ok24accounts

import (
	"fmt"
	"sync"
	"testing"
)

type Logger interface {
	Debugf(format string, args ...any)
}

type testLogger struct {
	mu    sync.Mutex
	count int
}

func (l *testLogger) Debugf(format string, args ...any) {
	_ = fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.count++
	l.mu.Unlock()
}

type InsufficientFunds struct {
	Account int
	Need    int64
}

func (e *InsufficientFunds) Error() string {
	return fmt.Sprintf("account %d: insufficient funds (need %d)", e.Account, e.Need)
}

type Account struct {
	ID      int
	mu      sync.Mutex
	balance int64
}

type Ledger struct {
	mu      sync.Mutex
	entries []string
}

func (l *Ledger) Record(from, to int, amt int64) {
	l.mu.Lock()
	l.entries = append(l.entries, fmt.Sprintf("%d->%d:%d", from, to, amt))
	l.mu.Unlock()
}

func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

type Bank struct {
	accounts   []*Account
	log        Logger
	onTransfer func(from, to int, amt int64)
}

func NewBank(n int, initial int64, log Logger) *Bank {
	b := &Bank{log: log}
	for i := 0; i < n; i++ {
		b.accounts = append(b.accounts, &Account{ID: i, balance: initial})
	}
	return b
}

func (b *Bank) Transfer(fromID, toID int, amt int64) error {
	if fromID == toID {
		return nil
	}
	from, to := b.accounts[fromID], b.accounts[toID]
	first, second := from, to
	if second.ID < first.ID {
		first, second = second, first
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()

	if from.balance < amt {
		err := &InsufficientFunds{Account: from.ID, Need: amt - from.balance}
		b.log.Debugf("transfer rejected: %v", err)
		return err
	}
	from.balance -= amt
	to.balance += amt
	b.log.Debugf("transfer %d -> %d amount=%d", from.ID, to.ID, amt)
	if b.onTransfer != nil {
		b.onTransfer(from.ID, to.ID, amt)
	}
	return nil
}

func (b *Bank) Total() int64 {
	var t int64
	for _, a := range b.accounts {
		a.mu.Lock()
		t += a.balance
		a.mu.Unlock()
	}
	return t
}

func TestProbe(t *testing.T) {
	log := &testLogger{}
	ledger := &Ledger{}
	bank := NewBank(5, 100, log)
	bank.onTransfer = ledger.Record

	var wg sync.WaitGroup
	var rejMu sync.Mutex
	rejected := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				from := (g + i) % 5
				to := (g*3 + i*7) % 5
				if err := bank.Transfer(from, to, int64(1+i%40)); err != nil {
					rejMu.Lock()
					rejected++
					rejMu.Unlock()
				}
			}
		}(g)
	}
	wg.Wait()

	if got := bank.Total(); got != 500 {
		t.Fatalf("money not conserved: %d", got)
	}
	if ledger.Len() == 0 {
		t.Fatal("no transfers recorded")
	}
	t.Logf("ledger=%d rejected=%d logs=%d", ledger.Len(), rejected, log.count)
}
