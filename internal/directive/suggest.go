package directive

import (
	"strings"
	"unicode/utf8"
)

// maxSuggestDistance bounds did-you-mean suggestions: two edits catch a
// dropped, doubled or swapped letter or two, without matching unrelated
// words.
const maxSuggestDistance = 2

// maxCompareLen caps the words compared, so a pathological comment costs
// nothing; real directive words are much shorter.
const maxCompareLen = 64

// editDistance is the optimal-string-alignment distance between a and b
// (Levenshtein plus adjacent transpositions, each edit costing 1), compared
// rune by rune, capped at limit+1.
func editDistance(a, b string, limit int) int {
	// Words of very different lengths are far apart: say so before
	// allocating anything.
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if na > maxCompareLen || nb > maxCompareLen || na-nb > limit || nb-na > limit {
		return limit + 1
	}
	ra, rb := []rune(a), []rune(b)
	// Three rolling rows: the transposition step looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			best := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				best = min(best, prev2[j-2]+1)
			}
			cur[j] = best
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit+1)
}

// suggest returns the candidate closest to word, or "" when none is close
// enough. The comparison ignores case and treats '-' as '_', so
// "GuardedBy" and "requires-shared" find their verbs. Short candidates
// (up to five letters) allow one edit, longer ones two, and a candidate
// must be longer than the distance, so that "x" never "means" "any" but
// "mux" means "mu". Ties go to the earlier candidate: callers pass their
// table order.
func suggest(word string, candidates []string) string {
	w := strings.ReplaceAll(strings.ToLower(word), "-", "_")
	best, bestDist := "", maxSuggestDistance+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		limit := maxSuggestDistance
		if len(c) <= 5 {
			limit = 1
		}
		d := editDistance(w, strings.ToLower(c), limit)
		if d <= limit && d < len(c) && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
