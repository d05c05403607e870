//go:build go1.21 && !confinelint_never

// Package features_buildtags: a file whose build constraint is satisfied
// is analysed; one that is excluded (ignored.go) is not.
package features_buildtags

func (c *Conn) leak() {
	go func() {
		c.bytes = 0 // want `c.bytes is confined to control but written on the goroutine started by the go statement`
	}()
}
