package webserver

import (
	"strings"
	"testing"
)

func TestAListenAddressNamesItsHostAndOnlyLoopbackIsQuiet(t *testing.T) {
	for _, c := range []struct {
		addr       string
		err, warns bool
	}{
		{"127.0.0.1:8765", false, false},
		{"[::1]:8765", false, false},
		{"localhost:8765", false, false},
		{":8765", true, false},
		{"8765", true, false},
		{"0.0.0.0:8765", false, true},
		{"10.1.2.3:8765", false, true},
		{"[::]:8765", false, true},
	} {
		warning, err := CheckAddr(c.addr)
		if (err != nil) != c.err || (warning != "") != c.warns {
			t.Errorf("%q: warning %q, error %v", c.addr, warning, err)
		}
		if warning != "" && !strings.Contains(warning, "TLS") {
			t.Errorf("%q: the warning does not say what is missing: %s", c.addr, warning)
		}
	}
}
