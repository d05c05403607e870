package locks

import (
	"slices"
	"testing"
)

func TestStringVerbs(t *testing.T) {
	for _, c := range []struct {
		format string
		n      int
		want   []bool
	}{
		{"%v and %s", 2, []bool{true, true}},
		{"%d %v", 2, []bool{false, true}},
		{"%#v %+v", 2, []bool{false, true}},
		{"100%% %q", 1, []bool{true}},
		{"%*d %x", 3, []bool{false, false, true}},
		{"%.*f %X", 3, []bool{false, false, true}},
		{"%[2]v %[1]d", 2, []bool{false, true}},
		{"%-8s|%08.3f|%w", 3, []bool{true, false, true}},
		{"%v %v", 1, []bool{true}},
		{"trailing %", 1, []bool{false}},
		{"%[x", 1, []bool{false}},
	} {
		if got := stringVerbs(c.format, c.n); !slices.Equal(got, c.want) {
			t.Errorf("stringVerbs(%q, %d) = %v, want %v", c.format, c.n, got, c.want)
		}
	}
}
