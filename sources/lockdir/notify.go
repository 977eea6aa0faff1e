package lockdir

// news is what changed since the scan before: the names to look at again,
// or, for a directory, that it must be listed whole.
type news struct {
	dirAll, archiveAll bool
	dir, archive       map[string]struct{}
}
