package wrong

type Consumer struct {
	mailbox chan int64
	offset  int64 //confined:control
	pending int   //confined:control
}

// example:start

//confined:drain
func (c *Consumer) drain() { // want `Consumer\.drain is declared //confined:drain but never receives from a channel, neither itself nor through the functions it calls, so it cannot apply the completed work waiting in the mailbox \[drain-without-receive\]`
	for len(c.mailbox) > 0 {
		c.pending--
	}
}

// example:end
