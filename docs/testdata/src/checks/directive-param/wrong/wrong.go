package wrong

type Pool struct{ tasks chan func() }

// example:start

//confined:spawns fn // want `//confined:spawns: func \(\*Pool\)\.Submit has no parameter fn.*\[directive-param\]`
func (p *Pool) Submit(task func()) { p.tasks <- task }

// example:end
