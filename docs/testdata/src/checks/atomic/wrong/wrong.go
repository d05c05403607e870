package wrong

type Conn struct {
	// example:start

	//confined:atomic
	seq int64
	// example:end
}

// example:start

func (c *Conn) Next() int64 {
	c.seq++      // want `\[atomic\]`
	return c.seq // want `\[atomic\]`
}

// example:end
