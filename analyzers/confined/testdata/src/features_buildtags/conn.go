package features_buildtags

import "github.com/confinelint/confinelint/confine"

type Conn struct {
	owner confine.Owner
	bytes int //confined:control
}

//confined:entry
func (c *Conn) run() {
	c.owner.Bind()
	c.bytes++
	c.leak()
}
