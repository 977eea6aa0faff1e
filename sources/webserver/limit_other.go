//go:build !unix

package webserver

// defaultMaxConns is a fixed cap where the open-file limit is not known.
func defaultMaxConns() int { return 1024 }
