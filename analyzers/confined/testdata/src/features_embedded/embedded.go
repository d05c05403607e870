// Package features_embedded: confined fields reached through embedded
// structs and promoted fields.
package features_embedded

import "github.com/confinelint/confinelint/confine"

type stats struct {
	hits int //confined:control
}

type Server struct {
	owner confine.Owner
	stats // promoted: s.hits is stats.hits
	name  string
}

//confined:entry
func (s *Server) run(req chan string) {
	s.owner.Bind()
	for r := range req {
		s.hits++ // silent: on control
		go s.handle(r)
	}
}

func (s *Server) handle(r string) {
	_ = s.name + r // silent: name is not confined
	s.hits++       // want `s.hits is confined to control but written on the goroutine started by the go statement: Server.handle -> s.hits`
}

// Embedding a pointer to the confined struct.
type Proxy struct {
	*Server
}

func (p *Proxy) start() {
	go func() {
		p.stats.hits = 0 // want `p.stats.hits is confined to control but written on the goroutine started by the go statement: Proxy.start.func1 -> p.stats.hits`
	}()
}
