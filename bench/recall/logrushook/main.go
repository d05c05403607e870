// sirupsen/logrus 1.4.0: entry.fireHooks took logger.mu for the whole hook
// dispatch; a hook that itself logged through entry.Logger re-entered
// Logger.mu and deadlocked (logrus issue "deadlock in 1.4.0 when a hook
// logs"). Fixed in 1.4.1 by copying the hooks under the lock and firing them
// after releasing it.
package main

import (
	"fmt"
	"os"
	"sync"

	"example.com/recall/logrushook/hooks"
	"example.com/recall/logrushook/logrus"
)

func main() {
	log := logrus.New(os.Stdout)
	log.AddHook(&hooks.Alert{})

	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Log(logrus.InfoLevel, fmt.Sprintf("worker %d started", w))
			if w == 2 {
				log.Log(logrus.ErrorLevel, "upstream unreachable")
			}
		}()
	}
	wg.Wait()
}
