package teststaged

import "testing"

// fakeTransport hands a message straight to another node's machine.
type fakeTransport struct{ to *Machine }

func (f *fakeTransport) Publish(msg string) { f.to.Apply(msg) }

func TestDeliver(t *testing.T) {
	m := &Machine{}
	n := &Node{t: &fakeTransport{to: m}}
	m.node = n
	n.Send("x")
}
