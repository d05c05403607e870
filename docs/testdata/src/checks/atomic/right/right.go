package right

import "sync/atomic"

type Conn struct {
	//confined:atomic
	seq int64
}

// example:start

func (c *Conn) Next() int64 {
	return atomic.AddInt64(&c.seq, 1)
}

// example:end
