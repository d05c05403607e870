// Package confine is a stub of the runtime half for the examples.
package confine

type Owner struct{ id uint64 }

func (o *Owner) Bind()    {}
func (o *Owner) Release() {}
func (o *Owner) Assert()  {}
func (o *Owner) Lend()    {}
func (o *Owner) Reclaim() {}
