package confine_test

import (
	"fmt"

	"github.com/confinelint/confinelint/confine"
)

func ExampleSetViolationHook() {
	// Count violations instead of panicking, say to log them in a canary.
	var reported []confine.ViolationKind
	previous := confine.SetViolationHook(func(v confine.Violation) {
		reported = append(reported, v.Kind)
	})
	defer func() { confine.SetViolationHook(previous) }()

	var o confine.Owner
	bound, stop := make(chan struct{}), make(chan struct{})
	go func() {
		o.Bind()
		defer o.Release()
		close(bound)
		<-stop
	}()
	<-bound
	o.Assert() // not the owner's goroutine
	close(stop)

	// Builds without -tags confine or -race report nothing.
	fmt.Println("reported exactly when enabled:", (len(reported) == 1) == confine.Enabled)
	// Output: reported exactly when enabled: true
}
