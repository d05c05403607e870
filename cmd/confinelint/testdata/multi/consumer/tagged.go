//go:build extra

package consumer

// Extra is built only with -tags extra.
func (c *Consumer) Extra() int { return c.hits }
