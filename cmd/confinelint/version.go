package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// moduleVersion is confinelint's module version from the build info:
// "v0.4.0" for go install ...@v0.4.0, a pseudo-version for a build in a
// checkout that stamps one, else "devel" followed by the commit when the
// build recorded it ("devel 995f127abcde+dirty").
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = " " + s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel" + rev + dirty
}

// printVersion answers go vet's -V=full, which keys vet's cache on the
// line: "confinelint version VERSION buildID=HASH", HASH being the
// executable's SHA-256, so a rebuilt binary never reuses stale results.
// For a "devel" version the go command keys on the buildID field alone
// (as for x/tools' own "devel comments-go-here"); for a release, on the
// whole line.
func printVersion(w io.Writer) int {
	sum, err := executableHash()
	if err != nil {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", err)
		return 1
	}
	fmt.Fprintf(w, "confinelint version %s buildID=%x\n", moduleVersion(), sum)
	return 0
}

func executableHash() ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
