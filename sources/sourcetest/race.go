//go:build race

package sourcetest

// raceDetector is true in a -race build, where every memory access is
// instrumented and an embedded database runs several times slower.
const raceDetector = true
