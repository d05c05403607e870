module example.com/recall

go 1.26
