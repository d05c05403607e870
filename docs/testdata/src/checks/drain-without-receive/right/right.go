package right

type Consumer struct {
	mailbox chan int64
	offset  int64 //confined:control
	pending int   //confined:control
}

// example:start

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
			c.pending--
		default:
			return
		}
	}
}

// example:end
