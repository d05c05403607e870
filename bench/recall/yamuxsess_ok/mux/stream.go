package mux

import "sync"

// Stream is one logical stream of a Session.
type Stream struct {
	id      uint32
	session *Session

	stateLock sync.Mutex
	closed    bool
	written   int
}

// Write records n bytes unless the stream is closed.
func (st *Stream) Write(n int) bool {
	st.stateLock.Lock()
	defer st.stateLock.Unlock()
	if st.closed {
		return false
	}
	st.written += n
	return true
}

// Close marks the stream closed and, after dropping stateLock, tells the
// session to forget it.
func (st *Stream) Close() {
	st.stateLock.Lock()
	if st.closed {
		st.stateLock.Unlock()
		return
	}
	st.closed = true
	st.stateLock.Unlock()

	st.session.closeStream(st.id)
}
