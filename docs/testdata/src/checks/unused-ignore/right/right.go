package right

// example:start

func count(items []string) int {
	n := len(items)
	return n
}

// example:end
