// Package b runs handlers on their own goroutines and calls into a.
package b

import "crosspkg/a"

type Handler struct{ c *a.Consumer }

func (h *Handler) start() {
	go h.reset()
	go h.flush()
	go h.drop()
	go h.post()
	go h.lag()
	go h.c.Reset() // want `a.Consumer.Reset is confined to control but called on the goroutine started by the go statement: go a.Consumer.Reset`
}

func (h *Handler) reset() {
	h.c.Reset() // want `a.Consumer.Reset is confined to control but called on the goroutine started by the go statement: Handler.reset -> a.Consumer.Reset`
}

func (h *Handler) flush() {
	h.c.Flush() // want `a.Consumer.Flush is confined to control but called on the goroutine started by the go statement`
}

func (h *Handler) drop() {
	h.c.Drop() // want `Consumer.inflight is confined to control but written on the goroutine started by the go statement: Handler.drop -> a.Consumer.Drop -> a.Consumer.helper -> Consumer.inflight`
}

// The fixed variant posts to the control goroutine's mailbox.
func (h *Handler) post() { h.c.Post(-1) }

func (h *Handler) lag() int {
	return h.c.Lag // want `h.c.Lag is confined to control but read on the goroutine started by the go statement: Handler.lag -> h.c.Lag`
}
