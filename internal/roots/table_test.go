package roots

import "testing"

func TestTableAdd(t *testing.T) {
	for _, tc := range []struct {
		spec, full, display string
		arg                 int
	}{
		{"example.com/pool.(*Pool).Submit:arg0", "(*example.com/pool.Pool).Submit", "pool.Pool.Submit", 0},
		{"(*example.com/pool.Pool).Submit:arg1", "(*example.com/pool.Pool).Submit", "pool.Pool.Submit", 1},
		{"example.com/pool.Pool.Go:arg0", "example.com/pool.Pool.Go", "pool.Pool.Go", 0},
		{"example.com/run.Go:arg2", "example.com/run.Go", "run.Go", 2},
		{"example.com/v.(V).Do:arg0", "(example.com/v.V).Do", "v.V.Do", 0},
	} {
		tab := NewTable()
		if err := tab.Add(tc.spec); err != nil {
			t.Fatalf("Add(%q): %v", tc.spec, err)
		}
		a, ok := tab.Lookup(tc.full, tc.arg)
		if !ok || a.Display != tc.display {
			t.Errorf("Add(%q): Lookup(%q, %d) = %+v, %v; want display %q", tc.spec, tc.full, tc.arg, a, ok, tc.display)
		}
	}
}

func TestTableAddErrors(t *testing.T) {
	for _, spec := range []string{"", "time.AfterFunc", "time.AfterFunc:argx", "time.AfterFunc:arg-1", ":arg0"} {
		if err := NewTable().Add(spec); err == nil {
			t.Errorf("Add(%q): no error", spec)
		}
	}
}

func TestBuiltinsAndFlag(t *testing.T) {
	tab := NewTable()
	if _, ok := tab.Lookup("time.AfterFunc", 1); !ok {
		t.Error("time.AfterFunc arg 1 is not asynchronous")
	}
	if _, ok := tab.Lookup("time.AfterFunc", 0); ok {
		t.Error("time.AfterFunc arg 0 is asynchronous")
	}
	saved := Default
	defer func() { Default = saved }()
	Default = NewTable()
	var f Flag
	if err := f.Set("a.Go:arg0, b.Go:arg1"); err != nil {
		t.Fatal(err)
	}
	if f.String() != "a.Go:arg0,b.Go:arg1" {
		t.Errorf("Flag.String() = %q", f.String())
	}
	if _, ok := Default.Lookup("b.Go", 1); !ok {
		t.Error("flag entry not in Default")
	}
	if err := f.Set("nonsense"); err == nil {
		t.Error("Flag.Set(nonsense): no error")
	}
	entries := Default.Entries()
	for i := 1; i < len(entries); i++ {
		if key(entries[i-1].FullName, entries[i-1].Arg) > key(entries[i].FullName, entries[i].Arg) {
			t.Fatalf("Entries not sorted at %d", i)
		}
	}
}
