//go:build !linux

package lockdir

// notifier without inotify gives no word: every scan lists the lock
// directory and archive/ whole, as on a filesystem inotify cannot vouch
// for (see notify_linux.go).
type notifier struct {
	fd int // always -1: no inotify queue
}

func newNotifier(string) *notifier { return &notifier{fd: -1} }

func (n *notifier) watchArchive(string) {}

func (n *notifier) drain() news {
	return news{dirAll: true, archiveAll: true, dir: map[string]struct{}{}, archive: map[string]struct{}{}}
}

func (n *notifier) close() {}
