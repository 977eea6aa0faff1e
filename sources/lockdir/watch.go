package lockdir

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/claimdeck/claimdeck/sources"
)

// debounce gathers a burst of events (a claim is a temp file, a link and an
// unlink) into one hint, well inside the 100 ms the dashboard has.
const debounce = 20 * time.Millisecond

// Watch sends a hint whenever the directory, archive/ or the tasks file
// changes. The channel closes when ctx ends or the watch fails; the hub then
// falls back to polling on its timer.
func (s *Source) Watch(ctx context.Context) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, sources.StorageErr("watch", "", err)
	}
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return nil, sources.StorageErr("watch", "", err)
	}
	// archive/ may not exist yet; the directory's own events cover its
	// creation, and its contents only matter once the seed archives there.
	archiveWatched := w.Add(s.archive) == nil
	tasksDir, tasksName := filepath.Split(s.tasks.path)
	tasksDir = filepath.Clean(tasksDir)
	if tasksDir != s.dir {
		_ = w.Add(tasksDir) // without it, changes to the tasks file wait for the timer
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				name := filepath.Base(ev.Name)
				if strings.HasPrefix(name, ".") && name != tasksName {
					continue // claimdeck's own temp and private files
				}
				if filepath.Dir(ev.Name) == tasksDir && tasksDir != s.dir && name != tasksName {
					continue
				}
				if !archiveWatched && ev.Name == s.archive && ev.Has(fsnotify.Create) {
					archiveWatched = w.Add(s.archive) == nil
				}
				if fire == nil {
					fire = time.After(debounce)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow or a lost watch: hint once so the hub re-reads
				// everything rather than trusting events it never got.
				select {
				case out <- struct{}{}:
				default:
				}
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default: // a hint is already waiting; one is enough
				}
			}
		}
	}()
	return out, nil
}
