package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

type shard struct {
	idx      int
	mu       sync.Mutex
	balances map[string]int
}

// Ledger is a sharded account store.
type Ledger struct {
	shards []*shard
}

func NewLedger(n int) *Ledger {
	l := &Ledger{}
	for i := 0; i < n; i++ {
		l.shards = append(l.shards, &shard{idx: i, balances: map[string]int{}})
	}
	return l
}

func (l *Ledger) shard(key string) *shard {
	h := fnv.New32a()
	h.Write([]byte(key))
	return l.shards[int(h.Sum32())%len(l.shards)]
}

func (l *Ledger) Deposit(acct string, amt int) {
	s := l.shard(acct)
	s.mu.Lock()
	s.balances[acct] += amt
	s.mu.Unlock()
}

// lockPair locks the shards of two keys in ascending shard index order,
// locking only once when both keys live on the same shard.
func (l *Ledger) lockPair(a, b string) (unlock func()) {
	sa, sb := l.shard(a), l.shard(b)
	if sa == sb {
		sa.mu.Lock()
		return sa.mu.Unlock
	}
	first, second := sa, sb
	if second.idx < first.idx {
		first, second = second, first
	}
	first.mu.Lock()
	second.mu.Lock()
	return func() {
		second.mu.Unlock()
		first.mu.Unlock()
	}
}

// Transfer moves funds atomically between two accounts which may be on
// different shards.
func (l *Ledger) Transfer(from, to string, amt int) bool {
	unlock := l.lockPair(from, to)
	defer unlock()
	src, dst := l.shard(from), l.shard(to)
	if src.balances[from] < amt {
		return false
	}
	src.balances[from] -= amt
	dst.balances[to] += amt
	return true
}

func (l *Ledger) Total() int {
	for _, s := range l.shards {
		s.mu.Lock()
	}
	t := 0
	for _, s := range l.shards {
		for _, v := range s.balances {
			t += v
		}
	}
	for i := len(l.shards) - 1; i >= 0; i-- {
		l.shards[i].mu.Unlock()
	}
	return t
}

func main() {
	l := NewLedger(8)
	accts := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	for _, a := range accts {
		l.Deposit(a, 100)
	}
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				from := accts[(w+i)%len(accts)]
				to := accts[(w+2*i+1)%len(accts)]
				l.Transfer(from, to, 7)
				l.Transfer(to, from, 3)
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("total:", l.Total())
}
