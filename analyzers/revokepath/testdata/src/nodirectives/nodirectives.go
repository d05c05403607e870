// Package nodirectives has locks, channels and callbacks but no
// directives: revokepath says nothing.
package nodirectives

import (
	"sync"
	"time"
)

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int
	done    map[int]int
}

func (c *Consumer) Run() {
	for m := range c.mailbox {
		c.mu.Lock()
		c.done[m]++
		c.commit()
		c.mu.Unlock()
	}
}

func (c *Consumer) commit() {}

func (c *Consumer) Start() {
	time.AfterFunc(time.Second, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.commit()
	})
	go c.Run()
}

func recursive(n int) int {
	if n == 0 {
		return 0
	}
	return recursive(n-1) + 1
}

var _ = recursive
