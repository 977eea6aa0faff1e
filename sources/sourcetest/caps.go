package sourcetest

import (
	"context"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testCaps holds a source to what it declares: each capability it claims
// works, and each it lacks is named in Caps.Lacks and refused, never
// skipped silently.
func testCaps(t *testing.T, k *kit) {
	c := k.src.Caps()
	missing := 0
	for _, has := range []bool{c.AtomicClaim, c.Subtasks, c.Watch, c.Escalation, c.WriteCheck} {
		if !has {
			missing++
		}
	}
	if len(c.Lacks) != missing {
		t.Fatalf("Caps %+v: %d capabilities are missing but Lacks names %d: %q", c, missing, len(c.Lacks), c.Lacks)
	}
	ctx := k.ctx(t)
	if err := k.src.CheckWrite(ctx); c.WriteCheck && err != nil {
		t.Fatalf("CheckWrite on a writable source: %v", err)
	} else if !c.WriteCheck {
		wantCode(t, "CheckWrite on a source that cannot check", err, model.CodeMisconfigured)
	}
	w, isWatcher := k.raw().(sources.Watcher)
	if !c.Watch {
		if isWatcher {
			if _, err := w.Watch(ctx); err == nil {
				t.Fatal("a source declaring no push returned a watch channel")
			}
		}
		return
	}
	if !isWatcher {
		t.Fatal("Caps.Watch is declared but the source is not a sources.Watcher")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hints, err := w.Watch(wctx)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	// Two writes, each awaited: the second is made once the source has
	// shown it is listening, so its hint cannot be lost to a slow start.
	for _, title := range []string{"pushed", "pushed again"} {
		k.create(t, sources.NewTask{Title: title})
		select {
		case <-hints:
		case <-ctx.Done():
			t.Fatalf("no hint after a write (%q) on a source that declares push", title)
		}
	}
}
