package webserver

import (
	"fmt"
	"net"
	"strings"
)

// CheckAddr is the one rule for where claimdeck listens. The host must be
// explicit: ":8765" would bind every interface without anyone having
// chosen to. A host other than loopback is allowed but earns a warning to
// print: claimdeck serves plain HTTP, so bearer tokens, lock tokens and
// task data would cross the network in clear text.
func CheckAddr(addr string) (warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: want host:port, e.g. 127.0.0.1:8765", addr)
	}
	if host == "" {
		return "", fmt.Errorf("listen address %q names no host, which would bind every interface: give 127.0.0.1%s for this host only, or the address to serve other hosts on", addr, addr[strings.LastIndexByte(addr, ':'):])
	}
	if ip := net.ParseIP(host); strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback() {
		return "", nil
	}
	return fmt.Sprintf("serving plain HTTP (no TLS) on %s, reachable from other hosts: bearer tokens, lock tokens and task data cross the network unencrypted. Listen on 127.0.0.1 and put a TLS proxy or an SSH tunnel in front (docs/security.md)", addr), nil
}
