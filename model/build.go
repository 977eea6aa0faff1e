package model

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// linkedVersion is a release's version, set by the release build with
// -ldflags "-X github.com/claimdeck/claimdeck/model.linkedVersion=v1.2.3".
var linkedVersion string

// BuildInfo is what the binary knows of its own build: from the release's
// linker flag, else from the Go build info (`go install …@v1.2.3` stamps
// the module version, a build in a git checkout the commit and its time).
type BuildInfo struct {
	// Version is the release or module version (v1.2.3, or a pseudo-version
	// naming the commit), or "devel" when the build recorded none.
	Version string `json:"version"`
	// Revision and Time are the commit the binary was built from and its
	// time, when the go command stamped them (-buildvcs, a git checkout).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	// Note says why Version is "devel" with no commit: the build carried
	// neither a version nor a commit.
	Note string `json:"note,omitempty"`
}

var build = sync.OnceValue(func() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	return readBuild(linkedVersion, bi, ok)
})

// Build returns this binary's build information, read once.
func Build() BuildInfo { return build() }

// readBuild is Build over given inputs, for tests.
func readBuild(linked string, bi *debug.BuildInfo, ok bool) BuildInfo {
	b := BuildInfo{Version: "devel", Go: runtime.Version()}
	if ok && bi != nil {
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
	}
	if linked != "" {
		b.Version = linked
	}
	if b.Version == "devel" && b.Revision == "" {
		b.Note = "built without a version or commit (go build -buildvcs=false, or outside a git checkout)"
	}
	return b
}

// String is the one-line version: "v1.2.3", "v0.0.0-2026…-9caf0489830f",
// or "devel 9caf0489830f (2026-11-27T09:28:06Z, modified)", or "devel
// (unknown commit)".
func (b BuildInfo) String() string {
	if b.Version != "devel" {
		return b.Version
	}
	if b.Revision == "" {
		return "devel (unknown commit)"
	}
	var s strings.Builder
	s.WriteString("devel ")
	s.WriteString(short(b.Revision))
	var extra []string
	if b.Time != "" {
		extra = append(extra, b.Time)
	}
	if b.Modified {
		extra = append(extra, "modified")
	}
	if len(extra) > 0 {
		s.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return s.String()
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
