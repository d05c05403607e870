// Pattern: podman libpod Container.Batch combined with logging of the
// container value (logrus.Debugf("...%v", ctr) / fmt.Errorf("%v: %w", ...)).
// Container implements fmt.Stringer and String() locks only
// `if !c.batched`. Inside Batch the callback formats the batched copy, so the
// implicit String() call made by fmt does not re-acquire the held lock.
// Outside Batch, String() is called on the original with no lock held.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
)

var errCtrStateInvalid = errors.New("container state improper")

type Container struct {
	id      string
	lock    *sync.Mutex
	state   *string
	batched bool
}

func (c *Container) String() string {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	return fmt.Sprintf("%s[%s]", c.id, *c.state)
}

func (c *Container) setState(s string) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	*c.state = s
}

func (c *Container) Batch(fn func(*Container) error) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	bc := &Container{id: c.id, lock: c.lock, state: c.state, batched: true}
	return fn(bc)
}

func pause(logger *log.Logger, c *Container) error {
	return c.Batch(func(bc *Container) error {
		logger.Printf("pausing %v", bc) // implicit bc.String(), batched: no lock
		if *bc.state != "running" {
			return fmt.Errorf("cannot pause %v: %w", bc, errCtrStateInvalid)
		}
		bc.setState("paused")
		logger.Printf("paused %s", bc)
		return nil
	})
}

func unpause(logger *log.Logger, c *Container) error {
	return c.Batch(func(bc *Container) error {
		if *bc.state != "paused" {
			return fmt.Errorf("cannot unpause %v: %w", bc, errCtrStateInvalid)
		}
		bc.setState("running")
		return nil
	})
}

func main() {
	logger := log.New(os.Stdout, "", 0)
	var ctrs []*Container
	for i := 0; i < 3; i++ {
		s := "running"
		ctrs = append(ctrs, &Container{id: fmt.Sprintf("ctr%d", i), lock: new(sync.Mutex), state: &s})
	}
	var wg sync.WaitGroup
	for _, c := range ctrs {
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if j%2 == 0 {
					err = pause(logger, c)
				} else {
					err = unpause(logger, c)
				}
				if err != nil && !errors.Is(err, errCtrStateInvalid) {
					logger.Fatal(err)
				}
				logger.Println("observed", c) // original: String() locks, nothing held
			}()
		}
	}
	wg.Wait()
	fmt.Println(ctrs)
}
