//go:build !race

package sourcetest

const raceDetector = false
