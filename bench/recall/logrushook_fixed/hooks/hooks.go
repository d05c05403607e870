// Package hooks holds application logrus hooks.
package hooks

import (
	"sync/atomic"

	"example.com/recall/logrushook_fixed/logrus"
)

// Alert pages on-call for every error and records that it did so, through
// the same logger the entry came from.
type Alert struct {
	sent atomic.Int64
}

// Levels implements logrus.Hook.
func (a *Alert) Levels() []logrus.Level { return []logrus.Level{logrus.ErrorLevel} }

// Fire implements logrus.Hook.
func (a *Alert) Fire(e *logrus.Entry) error {
	a.sent.Add(1)
	e.Logger.Log(logrus.WarnLevel, "alert dispatched: "+e.Message)
	return nil
}
