// Style: like the cockroach "bank" workload / a ledger service. Transfers lock
// two accounts of the same type, always lower ID first, so concurrent
// transfers in opposite directions cannot deadlock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type Account struct {
	ID      int
	mu      sync.Mutex
	balance int64
}

var errInsufficient = errors.New("insufficient funds")

func Transfer(from, to *Account, amount int64) error {
	if from.ID == to.ID {
		return nil
	}
	first, second := from, to
	if second.ID < first.ID {
		first, second = second, first
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()

	if from.balance < amount {
		return errInsufficient
	}
	from.balance -= amount
	to.balance += amount
	return nil
}

func total(accts []*Account) int64 {
	var sum int64
	for _, a := range accts {
		a.mu.Lock()
		sum += a.balance
		a.mu.Unlock()
	}
	return sum
}

func main() {
	accts := make([]*Account, 5)
	for i := range accts {
		accts[i] = &Account{ID: i, balance: 1000}
	}
	var wg sync.WaitGroup
	var failedMu sync.Mutex
	failed := 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				a := accts[(w+i)%len(accts)]
				b := accts[(w*3+i*7)%len(accts)]
				if err := Transfer(a, b, int64(i%50)); err != nil {
					failedMu.Lock()
					failed++
					failedMu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("total:", total(accts), "failed:", failed)
}
