// otherlogger_ok models a logrus hook that forwards entries to a separate
// audit logger (e.g. a syslog/file hook built on its own *logrus.Logger).
// CORRECT: Fire runs under app.mu, and it calls Log on h.audit, a DIFFERENT
// Logger instance held in the hook's own field, so it takes audit.mu, not
// app.mu. The audit logger has no hooks, so the only nesting is
// app.mu -> audit.mu, always in that order: no cycle, no self-deadlock.
// e.Logger is used only for its immutable Name.
package main

import (
	"fmt"

	"example.com/recall/relock_otherlogger_ok/logx"
)

type auditHook struct {
	audit *logx.Logger // distinct instance, never the one firing the hook
}

func (h *auditHook) Fire(e *logx.Entry) {
	h.audit.Log(e.Logger.Name + ": " + e.Msg)
}

func main() {
	app := logx.New("app")
	audit := logx.New("audit")
	app.AddHook(&auditHook{audit: audit})

	app.Log("user alice logged in")
	app.Log("user alice changed password")

	fmt.Println(app.Lines())
	fmt.Println(audit.Lines())
}
