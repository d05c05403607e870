module example.com/shop

go 1.26.0

require (
	github.com/confinelint/confinelint v0.0.0
	github.com/twmb/franz-go v1.18.0
	golang.org/x/sync v0.24.0
)

replace github.com/confinelint/confinelint => ../../../..

replace github.com/twmb/franz-go => ./stubs/franz-go
