module example.com/pipeline

go 1.26.0

require github.com/confinelint/confinelint v0.0.0

replace github.com/confinelint/confinelint => ../
