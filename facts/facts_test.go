package facts

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"testing"
)

// TestFactsAreGobStable fills every fact type with sample data, encodes it
// twice and decodes it: the encodings must be byte-identical (the build
// cache keys on them) and the round trip lossless.
func TestFactsAreGobStable(t *testing.T) {
	for _, f := range All() {
		v := reflect.New(reflect.TypeOf(f).Elem())
		fill(v.Elem(), 0)
		first, second := encode(t, v.Interface()), encode(t, v.Interface())
		if !bytes.Equal(first, second) {
			t.Errorf("%T: two encodings differ", f)
		}
		back := reflect.New(v.Elem().Type())
		if err := gob.NewDecoder(bytes.NewReader(first)).Decode(back.Interface()); err != nil {
			t.Fatalf("%T: decode: %v", f, err)
		}
		if !reflect.DeepEqual(back.Interface(), v.Interface()) {
			t.Errorf("%T: round trip lost data:\n got %+v\nwant %+v", f, back.Elem(), v.Elem())
		}
		if s := v.Interface().(interface{ String() string }).String(); s == "" {
			t.Errorf("%T: empty String()", f)
		}
	}
}

// TestFactsHoldNoMapsOrInterfaces enforces the package rule: gob encodes
// maps in random order and interfaces need registration.
func TestFactsHoldNoMapsOrInterfaces(t *testing.T) {
	for _, f := range All() {
		if path := forbidden(reflect.TypeOf(f).Elem(), reflect.TypeOf(f).Elem().Name()); path != "" {
			t.Errorf("%T holds a map or interface at %s", f, path)
		}
	}
}

func forbidden(t reflect.Type, path string) string {
	switch t.Kind() {
	case reflect.Map, reflect.Interface:
		return path
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return forbidden(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			if p := forbidden(t.Field(i).Type, path+"."+t.Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatalf("%T: encode: %v", v, err)
	}
	return buf.Bytes()
}

// fill sets every field to a non-zero sample so that a dropped field shows.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Slice:
		if depth > 3 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
