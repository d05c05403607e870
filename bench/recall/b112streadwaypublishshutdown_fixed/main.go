// Project: streadway/amqp (connection.go Connection.send and Connection.shutdown, channel.go Channel.Publish, Channel.sendOpen and Channel.shutdown), late 2013.
// Bug: Channel.Publish holds the channel's struct mutex me.m while it sends the basic.publish frames; when the socket write fails because the broker went away, Connection.send calls Connection.shutdown synchronously, which removes every registered channel and shuts it down through Channel.shutdown, and that locks me.m of the publishing channel again, so a publisher racing a broker disconnect blocks forever (PR #84 "Channel.Publish's blocks upon disconnection during high volume publishes"; the fix runs the shutdown in its own goroutine, go me.shutdown(...), fix commit approximate).
package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

type Error struct {
	Code   int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("Exception (%d) Reason: %q", e.Code, e.Reason) }

const FrameError = 501

var ErrClosed = &Error{Code: 504, Reason: "channel/connection is not open"}

type frame interface{ channel() uint16 }

type methodFrame struct {
	ChannelId uint16
	Method    string
}

type bodyFrame struct {
	ChannelId uint16
	Body      []byte
}

func (f *methodFrame) channel() uint16 { return f.ChannelId }
func (f *bodyFrame) channel() uint16   { return f.ChannelId }

type writer struct{ w io.Writer }

func (w *writer) WriteFrame(f frame) error {
	_, err := w.w.Write([]byte{byte(f.channel())})
	return err
}

type channelRegistry struct {
	sync.Mutex
	channels map[uint16]*Channel
}

func (r *channelRegistry) add(id uint16, ch *Channel) { r.Lock(); r.channels[id] = ch; r.Unlock() }

func (r *channelRegistry) removeAll() []*Channel {
	r.Lock()
	defer r.Unlock()
	all := make([]*Channel, 0, len(r.channels))
	for id, ch := range r.channels {
		all = append(all, ch)
		delete(r.channels, id)
	}
	return all
}

type Connection struct {
	destructor sync.Once  // shutdown once
	sendM      sync.Mutex // conn writer mutex
	m          sync.Mutex // struct field mutex

	conn     io.ReadWriteCloser
	writer   *writer
	channels channelRegistry
	noNotify bool
	closes   []chan *Error
	errors   chan *Error
}

func (me *Connection) NotifyClose(c chan *Error) chan *Error {
	me.m.Lock()
	defer me.m.Unlock()
	if me.noNotify {
		close(c)
	} else {
		me.closes = append(me.closes, c)
	}
	return c
}

func (me *Connection) send(f frame) error {
	me.sendM.Lock()
	err := me.writer.WriteFrame(f)
	me.sendM.Unlock()

	if err != nil {
		// shutdown could be re-entrant from signaling notify chans
		go me.shutdown(&Error{Code: FrameError, Reason: err.Error()})
	}
	return err
}

func (me *Connection) shutdown(err *Error) {
	me.destructor.Do(func() {
		me.m.Lock()
		defer me.m.Unlock()

		if err != nil {
			for _, c := range me.closes {
				c <- err
			}
		}
		for _, ch := range me.channels.removeAll() {
			ch.shutdown(err)
		}
		if err != nil {
			me.errors <- err
		}
		me.conn.Close()
		for _, c := range me.closes {
			close(c)
		}
		me.noNotify = true
	})
}

type Channel struct {
	destructor sync.Once
	sendM      sync.Mutex // sequence channel frames
	m          sync.Mutex // struct field mutex

	connection     *Connection
	id             uint16
	send           func(*Channel, string, []byte) error
	errors         chan *Error
	publishCounter uint64
	noNotify       bool
}

func (me *Channel) shutdown(e *Error) {
	me.destructor.Do(func() {
		me.m.Lock()
		defer me.m.Unlock()
		me.send = (*Channel).sendClosed
		if e != nil {
			me.errors <- e
		}
		me.noNotify = true
	})
}

func (me *Channel) sendClosed(method string, body []byte) error { return ErrClosed }

func (me *Channel) sendOpen(method string, body []byte) error {
	me.sendM.Lock()
	defer me.sendM.Unlock()
	if err := me.connection.send(&methodFrame{ChannelId: me.id, Method: method}); err != nil {
		return err
	}
	return me.connection.send(&bodyFrame{ChannelId: me.id, Body: body})
}

func (me *Channel) Publish(exchange, key string, body []byte) error {
	me.m.Lock()
	defer me.m.Unlock()

	if err := me.send(me, "basic.publish "+exchange+"/"+key, body); err != nil {
		return err
	}
	me.publishCounter++
	return nil
}

// brokenSocket is the TCP connection after RabbitMQ was stopped.
type brokenSocket struct{}

func (brokenSocket) Read(p []byte) (int, error)  { return 0, io.EOF }
func (brokenSocket) Write(p []byte) (int, error) { return 0, errors.New("write: broken pipe") }
func (brokenSocket) Close() error                { return nil }

func main() {
	conn := &Connection{
		conn:     brokenSocket{},
		writer:   &writer{brokenSocket{}},
		channels: channelRegistry{channels: make(map[uint16]*Channel)},
		errors:   make(chan *Error, 1),
	}
	ch := &Channel{connection: conn, id: 1, send: (*Channel).sendOpen, errors: make(chan *Error, 1)}
	conn.channels.add(1, ch)
	closed := conn.NotifyClose(make(chan *Error, 1))

	err := ch.Publish("events", "user.created", []byte(`{"id":1}`))
	fmt.Println("publish:", err)
	fmt.Println("connection closed:", <-closed)
}
