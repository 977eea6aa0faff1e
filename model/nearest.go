package model

// Nearest is the candidate closest to word by edit distance (Levenshtein),
// if one is closer than within: a plausible slip of the finger. Of equally
// close candidates the first wins. The configuration's unknown keys and the
// dashboard's command line both suggest with it.
func Nearest(word string, cands []string, within int) string {
	best, bestD := "", within
	for _, c := range cands {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
