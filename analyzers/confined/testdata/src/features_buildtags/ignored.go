//go:build ignore

// This file is excluded by its build constraint: its violation (which has
// no want) must not be reported, and its type error must not matter.
package features_buildtags

func (c *Conn) excluded() {
	go func() {
		c.bytes = 0
	}()
	var x int = "not analysed"
}
