package confine_test

import (
	"fmt"

	"github.com/confinelint/confinelint/confine"
)

// Consumer keeps offsets that only its run loop may touch.
type Consumer struct {
	owner   confine.Owner    //confined:control
	offsets map[string]int64 //confined:control
	inbox   chan func()      // work for the run loop
}

func NewConsumer() *Consumer {
	return &Consumer{offsets: make(map[string]int64), inbox: make(chan func())}
}

// run is the consumer's goroutine: the owner of offsets while it runs.
//
//confined:entry
func (c *Consumer) run(done chan<- struct{}) {
	defer close(done) // runs last: the owner is released by then
	c.owner.Bind()
	defer c.owner.Release()
	for f := range c.inbox {
		f()
	}
}

// Commit records an offset. It is for callbacks the run loop invokes; its
// callers outside this package are invisible to confinelint, so it asserts.
//
//confined:control
func (c *Consumer) Commit(topic string, offset int64) {
	c.owner.Assert()
	c.offsets[topic] = offset
}

// Offset returns the last committed offset of topic.
//
//confined:control
func (c *Consumer) Offset(topic string) int64 {
	c.owner.Assert()
	return c.offsets[topic]
}

func Example() {
	c := NewConsumer()
	done := make(chan struct{})
	go c.run(done)

	// Hand work to the owner rather than touching its state from here;
	// calling c.Commit directly would be a WrongGoroutine violation.
	c.inbox <- func() { c.Commit("orders", 42) }
	close(c.inbox)
	<-done

	// The loop has released the owner: shutdown code may read the state.
	fmt.Println(c.Offset("orders"))
	// Output: 42
}
