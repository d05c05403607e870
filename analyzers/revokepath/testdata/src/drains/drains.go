// Package drains: a //confined:drain must receive from a channel, itself
// or through what it calls. Declaring one that cannot is reported.
package drains

type Consumer struct {
	mailbox chan int64
	results chan int64
	offset  int64 //confined:control
	pending int   //confined:control
}

//confined:drain
func (c *Consumer) selectDrain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

//confined:drain
func (c *Consumer) rangeDrain() {
	for off := range c.results {
		c.offset = off
	}
}

//confined:drain
func (c *Consumer) viaHelper() {
	for c.pending > 0 {
		c.takeOne()
	}
}

func (c *Consumer) takeOne() {
	c.offset = <-c.mailbox
	c.pending--
}

// both drains through the drains above.
//
//confined:drain
func (c *Consumer) both() {
	c.selectDrain()
	c.viaHelper()
}

//confined:drain
func (c *Consumer) lengthOnly() { // want `Consumer\.lengthOnly is declared //confined:drain but never receives from a channel, neither itself nor through the functions it calls, so it cannot apply the completed work waiting in the mailbox \[drain-without-receive\]`
	for len(c.mailbox) > 0 {
		c.pending--
	}
}

//confined:drain
func (c *Consumer) placeholder() {} // want `Consumer\.placeholder is declared //confined:drain but never receives`

// recursive calls itself and nothing else: no receive.
//
//confined:drain
func (c *Consumer) recursive(n int) { // want `Consumer\.recursive is declared //confined:drain but never receives`
	if n > 0 {
		c.recursive(n - 1)
	}
}
