// Project: lxc/lxd (LXD 4.9), files lxd/instance/operationlock/operationlock.go
// and lxd/instance/drivers/driver_lxc.go (Shutdown / Stop).
// Fix: PR lxc/lxd#8255 "Instance: Fix deadlock in instance operationlock
// package" (Dec 2020).
//
// Instance operations are serialised through a package-level
// instanceOperationsLock guarding the instanceOperations map. A graceful
// `lxc stop` (Shutdown) creates a reusable "stop" operation. A concurrent
// `lxc stop -f` (Stop) asks CreateWaitGet for the same action with reuse=true;
// CreateWaitGet hands it to Create, which takes instanceOperationsLock
// (line 51) and, finding a reusable operation, refreshes its timeout by
// calling op.Reset(). Reset is the exported helper and takes
// instanceOperationsLock itself (line 132): the goroutine waits for a
// mutex it already holds, every later instance operation on the host blocks
// on the same lock, and `lxc stop -f` hangs. The fix makes Create poke
// op.chanReset directly ("Reset operation timeout without releasing lock or
// deadlocking using Reset() function").
package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// ---- lxd/instance/operationlock ----

var instanceOperationsLock sync.Mutex
var instanceOperations = make(map[int]*InstanceOperation)

// InstanceOperation operation locking.
type InstanceOperation struct {
	action    string
	chanDone  chan error
	chanReset chan bool
	err       error
	id        int
	reusable  bool
}

// Action returns operation's action.
func (op InstanceOperation) Action() string {
	return op.action
}

// Create creates a new operation lock for an Instance if one does not already
// exist and returns it. If reusable is set then a later caller passing reuse
// gets the existing lock back with its timeout reset.
func Create(instanceID int, action string, reusable bool, reuse bool) (*InstanceOperation, error) {
	instanceOperationsLock.Lock()
	defer instanceOperationsLock.Unlock()

	op := instanceOperations[instanceID]
	if op != nil {
		if op.reusable && reuse {
			err := op.Reset()
			if err != nil {
				return nil, err
			}
			return op, nil
		}

		return nil, fmt.Errorf("Instance is busy running a %s operation", op.action)
	}

	op = &InstanceOperation{}
	op.id = instanceID
	op.action = action
	op.reusable = reusable
	op.chanDone = make(chan error)
	op.chanReset = make(chan bool)

	instanceOperations[instanceID] = op

	go func(op *InstanceOperation) {
		for {
			select {
			case <-op.chanDone:
				return
			case <-op.chanReset:
				continue
			case <-time.After(time.Second * 30):
				op.Done(fmt.Errorf("Instance %s operation timed out after 30 seconds", op.action))
				return
			}
		}
	}(op)

	return op, nil
}

// CreateWaitGet waits for a conflicting operation of the same type, returns
// an operation of one of the alternate types, or otherwise calls Create.
func CreateWaitGet(instanceID int, action string, altActions []string, reusable bool, reuse bool) (bool, *InstanceOperation, error) {
	op := Get(instanceID)

	// No existing operation, call create.
	if op == nil {
		op, err := Create(instanceID, action, reusable, reuse)
		return false, op, err
	}

	// Operation matches and not reusable or asked to reuse, wait.
	if op.action == action && (!reuse || !op.reusable) {
		err := op.Wait()
		return true, nil, err
	}

	// Operation matches one the alternate actions, return the operation.
	for _, alt := range altActions {
		if op.action == alt {
			return false, op, nil
		}
	}

	// Send the rest to Create.
	op, err := Create(instanceID, action, reusable, reuse)
	return false, op, err
}

// Get retrieves an existing lock or returns nil if no lock exists.
func Get(instanceID int) *InstanceOperation {
	instanceOperationsLock.Lock()
	defer instanceOperationsLock.Unlock()

	return instanceOperations[instanceID]
}

// Reset resets the operation timeout.
func (op *InstanceOperation) Reset() error {
	instanceOperationsLock.Lock()
	defer instanceOperationsLock.Unlock()

	// This function can be called on a nil struct.
	if op == nil {
		return nil
	}

	// Check if already done.
	runningOp, ok := instanceOperations[op.id]
	if !ok || runningOp != op {
		return fmt.Errorf("Operation is already done or expired")
	}

	op.chanReset <- true
	return nil
}

// Wait waits for an operation to finish.
func (op *InstanceOperation) Wait() error {
	if op == nil {
		return nil
	}
	<-op.chanDone
	return op.err
}

// Done indicates the operation has finished.
func (op *InstanceOperation) Done(err error) {
	instanceOperationsLock.Lock()
	defer instanceOperationsLock.Unlock()

	if op == nil {
		return
	}

	runningOp, ok := instanceOperations[op.id]
	if !ok || runningOp != op {
		return
	}

	op.err = err
	close(op.chanDone)
	delete(instanceOperations, op.id)
}

// ---- lxd/instance/drivers (lxc driver) ----

type lxc struct {
	id      int
	name    string
	mu      sync.Mutex
	stopped chan struct{}
}

// Shutdown is `lxc stop`: a graceful, reusable stop operation.
func (c *lxc) Shutdown(timeout time.Duration) error {
	_, op, err := CreateWaitGet(c.id, "stop", []string{"restart"}, true, false)
	if err != nil {
		return err
	}
	select {
	case <-c.stopped:
	case <-time.After(timeout):
	}
	op.Done(nil)
	return nil
}

// Stop is `lxc stop -f`: it reuses a running stop operation.
func (c *lxc) Stop(stateful bool) error {
	exists, op, err := CreateWaitGet(c.id, "stop", []string{"restart"}, false, true)
	if err != nil {
		return err
	}
	if exists {
		return nil
	}
	// Force kill the container.
	c.mu.Lock()
	select {
	case <-c.stopped:
	default:
		close(c.stopped)
	}
	c.mu.Unlock()
	op.Done(nil)
	return nil
}

func main() {
	c := &lxc{id: 7, name: "c1", stopped: make(chan struct{})}

	// lxc stop c1 (graceful, waits for the guest to power off)
	go func() {
		if err := c.Shutdown(10 * time.Second); err != nil {
			fmt.Println("shutdown:", err)
		}
	}()
	time.Sleep(100 * time.Millisecond)

	// lxc stop -f c1 while the graceful stop is in progress
	done := make(chan error, 1)
	go func() { done <- c.Stop(false) }()

	select {
	case err := <-done:
		fmt.Println("forced stop finished:", err)
	case <-time.After(2 * time.Second):
		fmt.Println("DEADLOCK")
		os.Exit(2)
	}
}
