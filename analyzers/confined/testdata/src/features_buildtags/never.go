//go:build confinelint_never

package features_buildtags

func (c *Conn) never() {
	go func() { c.bytes = 0 }()
}
