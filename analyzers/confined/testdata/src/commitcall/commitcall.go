// Package commitcall: a commit called on a foreign goroutine is revokepath's
// inline-commit finding; confined stays silent on the call so the problem is
// reported once. A drain called there is confined's finding.
package commitcall

// Consumer owns done on its control goroutine.
type Consumer struct {
	done int //confined:control
}

//confined:commit
func (c *Consumer) commit() { _ = c.done }

//confined:drain
func (c *Consumer) drain() { c.done++ }

//confined:callback
func (c *Consumer) onRevoked() {
	c.commit()
	c.drain() // want `Consumer.drain is confined to control but called on the goroutine running callback Consumer.onRevoked`
}
