package right

type Pool struct{ tasks chan func() }

// example:start

//confined:spawns task
func (p *Pool) Submit(task func()) { p.tasks <- task }

// example:end
