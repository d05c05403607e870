package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201120000-995f127abcde+dirty"}}, "v0.0.0-20261201120000-995f127abcde+dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "995f127abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}}, "devel 995f127abcde+dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		if got := versionOf(&tc.bi); got != tc.want {
			t.Errorf("versionOf(%+v) = %q, want %q", tc.bi.Main, got, tc.want)
		}
	}
}

// TestVersionLine: -V=full is what go vet parses to key its cache, and
// SARIF's driver carries the same version; neither is x/tools'
// placeholder "devel comments-go-here".
func TestVersionLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := confinelintBinary(t)
	out, err := exec.Command(bin, "-V=full").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) < 4 || f[0] != "confinelint" || f[1] != "version" || !strings.HasPrefix(f[len(f)-1], "buildID=") ||
		strings.Contains(string(out), "comments-go-here") {
		t.Errorf("-V=full printed %q", out)
	}
	mod := t.TempDir()
	writeFiles(t, mod, map[string]string{"go.mod": "module example.com/v\n\ngo 1.26\n", "v.go": "package v\n"})
	sarif, _, _ := runBinary(t, mod, nil, "-f", "sarif", "./...")
	var log struct {
		Runs []struct {
			Tool struct{ Driver struct{ Version string } }
		}
	}
	if err := json.Unmarshal([]byte(sarif), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("SARIF: %v\n%s", err, sarif)
	}
	if got := log.Runs[0].Tool.Driver.Version; got == "" || got != strings.Join(f[2:len(f)-1], " ") {
		t.Errorf("SARIF driver version %q, -V=full says %q", got, f[2:len(f)-1])
	}
	// go vet accepts the line: it runs the tool (and caches by it).
	vet := exec.Command("go", "vet", "-vettool="+filepath.Clean(bin), "./...")
	vet.Dir = mod
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet with confinelint: %v\n%s", err, out)
	}
}
