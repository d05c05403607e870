// Style: like a lock-coupled ordered index in a key-value store memtable
// (badger/pebble-style prototype). Hand-over-hand locking down a sorted
// linked list: a node's successor is only ever locked while holding the node
// itself, so locks are always acquired in list order.
package main

import (
	"fmt"
	"sync"
)

type node struct {
	mu   sync.Mutex
	key  int
	val  string
	next *node
}

type OrderedList struct {
	head *node // sentinel, never removed
}

func NewOrderedList() *OrderedList {
	return &OrderedList{head: &node{key: -1 << 62}}
}

// locate returns prev and cur both locked (cur may be nil) with
// prev.key < key <= cur.key.
func (l *OrderedList) locate(key int) (prev, cur *node) {
	prev = l.head
	prev.mu.Lock()
	cur = prev.next
	for cur != nil {
		cur.mu.Lock()
		if cur.key >= key {
			return prev, cur
		}
		prev.mu.Unlock()
		prev, cur = cur, cur.next
	}
	return prev, nil
}

func (l *OrderedList) Put(key int, val string) {
	prev, cur := l.locate(key)
	if cur != nil && cur.key == key {
		cur.val = val
	} else {
		prev.next = &node{key: key, val: val, next: cur}
	}
	if cur != nil {
		cur.mu.Unlock()
	}
	prev.mu.Unlock()
}

func (l *OrderedList) Delete(key int) bool {
	prev, cur := l.locate(key)
	found := cur != nil && cur.key == key
	if found {
		prev.next = cur.next
	}
	if cur != nil {
		cur.mu.Unlock()
	}
	prev.mu.Unlock()
	return found
}

func (l *OrderedList) Len() int {
	n := 0
	prev := l.head
	prev.mu.Lock()
	for cur := prev.next; cur != nil; cur = cur.next {
		cur.mu.Lock()
		prev.mu.Unlock()
		prev = cur
		n++
	}
	prev.mu.Unlock()
	return n
}

func main() {
	l := NewOrderedList()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := i*4 + w
				l.Put(k, fmt.Sprintf("v%d", k))
				if k%3 == 0 {
					l.Delete(k)
				}
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("entries:", l.Len())
}
