package wrong

// example:start

func count(items []string) int {
	//confined:ignore was racy before the refactor // want `this //confined:ignore silences no finding; remove it \[unused-ignore\]`
	n := len(items)
	return n
}

// example:end
