// Package ext declares the handle interface another package implements.
package ext

type Collection interface {
	Add(k string)
	Finish() error
}
