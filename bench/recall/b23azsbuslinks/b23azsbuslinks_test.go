// Project: Azure/azure-sdk-for-go (sdk/messaging/azservicebus/internal)
// Bug: AMQPLinksImpl.recoverLink took l.mu and then tore the links down via
// the public Close(), which takes l.mu again; a link-level error during a
// receive therefore hung the receiver forever.
// Fix: call the closeWithoutLocking helper while l.mu is already held.
package b23azsbuslinks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

type LinkID struct {
	Conn uint64
	Link uint64
}

type AMQPSender interface {
	Close(ctx context.Context) error
}
type AMQPReceiver interface {
	Close(ctx context.Context) error
}

type fakeLink struct {
	name   string
	closed bool
}

func (f *fakeLink) Close(ctx context.Context) error {
	if f.closed {
		return errors.New("already closed")
	}
	f.closed = true
	return nil
}

type CreateLinkFunc func(ctx context.Context) (AMQPSender, AMQPReceiver, error)

type AMQPLinksImpl struct {
	entityPath     string
	managementPath string
	createLink     CreateLinkFunc

	mu                sync.RWMutex
	id                LinkID
	Sender            AMQPSender
	Receiver          AMQPReceiver
	closedPermanently bool
}

type LinksWithID struct {
	Sender   AMQPSender
	Receiver AMQPReceiver
	ID       LinkID
}

func NewAMQPLinks(entityPath string, createLink CreateLinkFunc) *AMQPLinksImpl {
	return &AMQPLinksImpl{entityPath: entityPath, managementPath: entityPath + "/$management", createLink: createLink}
}

func (l *AMQPLinksImpl) String() string {
	return fmt.Sprintf("links(%s, c:%d, l:%d)", l.entityPath, l.id.Conn, l.id.Link)
}

func (l *AMQPLinksImpl) Get(ctx context.Context) (*LinksWithID, error) {
	l.mu.RLock()
	sender, receiver, id, closed := l.Sender, l.Receiver, l.id, l.closedPermanently
	l.mu.RUnlock()
	if closed {
		return nil, errors.New("link was closed by user")
	}
	if sender != nil {
		return &LinksWithID{Sender: sender, Receiver: receiver, ID: id}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.initWithoutLocking(ctx); err != nil {
		return nil, err
	}
	return &LinksWithID{Sender: l.Sender, Receiver: l.Receiver, ID: l.id}, nil
}

func (l *AMQPLinksImpl) initWithoutLocking(ctx context.Context) error {
	s, r, err := l.createLink(ctx)
	if err != nil {
		return err
	}
	l.Sender, l.Receiver = s, r
	l.id.Link++
	return nil
}

func (l *AMQPLinksImpl) RecoverIfNeeded(ctx context.Context, theirID LinkID, origErr error) error {
	if origErr == nil {
		return nil
	}
	var linkErr *LinkError
	if errors.As(origErr, &linkErr) {
		return l.recoverLink(ctx, theirID)
	}
	return origErr
}

func (l *AMQPLinksImpl) recoverLink(ctx context.Context, theirID LinkID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if theirID.Link != l.id.Link {
		return nil
	}
	if err := l.Close(ctx, false); err != nil {
		return err
	}
	return l.initWithoutLocking(ctx)
}

func (l *AMQPLinksImpl) Close(ctx context.Context, permanent bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeWithoutLocking(ctx, permanent)
}

func (l *AMQPLinksImpl) closeWithoutLocking(ctx context.Context, permanent bool) error {
	if permanent {
		l.closedPermanently = true
	}
	var errs []error
	if l.Sender != nil {
		errs = append(errs, l.Sender.Close(ctx))
		l.Sender = nil
	}
	if l.Receiver != nil {
		errs = append(errs, l.Receiver.Close(ctx))
		l.Receiver = nil
	}
	return errors.Join(errs...)
}

type LinkError struct{ inner error }

func (e *LinkError) Error() string { return "link detached: " + e.inner.Error() }

func TestProbe(t *testing.T) {
	n := 0
	links := NewAMQPLinks("orders/subscriptions/billing", func(ctx context.Context) (AMQPSender, AMQPReceiver, error) {
		n++
		return &fakeLink{name: fmt.Sprintf("s%d", n)}, &fakeLink{name: fmt.Sprintf("r%d", n)}, nil
	})
	ctx := context.Background()
	lwid, err := links.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcvErr := &LinkError{inner: errors.New("amqp:link:detach-forced")}
	if err := links.RecoverIfNeeded(ctx, lwid.ID, rcvErr); err != nil {
		t.Fatal(err)
	}
	t.Logf("recovered %s", links)
	if err := links.Close(ctx, true); err != nil {
		t.Fatal(err)
	}
}
