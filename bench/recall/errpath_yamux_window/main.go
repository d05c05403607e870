// Modelled on hashicorp/yamux stream send windows: Write holds s.mu; when the
// window is exhausted the error handler releases s.mu, waits for a window
// update, and re-acquires s.mu before returning to the locked caller.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var (
	errWindowExhausted = errors.New("yamux: send window exhausted")
	errStreamClosed    = errors.New("yamux: stream closed")
)

type Stream struct {
	mu         sync.Mutex
	sendWindow uint32
	closed     bool
	sent       int
	waits      int
	notify     chan struct{} // capacity 1; never sent to while holding mu
}

// reserveLocked takes up to n bytes of send window. Caller holds s.mu.
func (s *Stream) reserveLocked(n uint32) (uint32, error) {
	if s.closed {
		return 0, errStreamClosed
	}
	if s.sendWindow == 0 {
		return 0, errWindowExhausted
	}
	if n > s.sendWindow {
		n = s.sendWindow
	}
	s.sendWindow -= n
	return n, nil
}

// waitLocked is entered with s.mu held and returns with s.mu held. Only on
// errWindowExhausted does it drop the lock, block, and take the lock again.
func (s *Stream) waitLocked(err error) error {
	if errors.Is(err, errWindowExhausted) {
		s.waits++
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-time.After(5 * time.Millisecond): // re-check periodically
		}
		s.mu.Lock()
		return nil
	}
	return err
}

func (s *Stream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for total < len(b) {
		n, err := s.reserveLocked(uint32(len(b) - total))
		if err != nil {
			if err = s.waitLocked(err); err != nil {
				return total, err
			}
			continue
		}
		total += int(n)
		s.sent += int(n)
	}
	return total, nil
}

func (s *Stream) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// incrSendWindow is called by the session's receive loop on a window update.
func (s *Stream) incrSendWindow(n uint32) {
	s.mu.Lock()
	s.sendWindow += n
	s.mu.Unlock()
	s.wake()
}

func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
}

func main() {
	const writers, perWriter, initial = 4, 2000, 256
	s := &Stream{sendWindow: initial, notify: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := s.Write(make([]byte, perWriter/10)); err != nil {
					return
				}
			}
		}()
	}
	// Peer: credits exactly the remaining bytes in small window updates.
	go func() {
		for credited := initial; credited < writers*perWriter; credited += 100 {
			time.Sleep(50 * time.Microsecond)
			s.incrSendWindow(100)
		}
	}()
	wg.Wait()
	s.Close()
	_, err := s.Write([]byte("late"))
	s.mu.Lock()
	fmt.Printf("sent=%d waits=%d lateErr=%v\n", s.sent, s.waits, err)
	s.mu.Unlock()
}
