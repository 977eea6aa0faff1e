package mesh

import (
	"context"
	"net"
	"strings"
	"testing"
)

// A webhook that cannot be reached is reported naming the webhook without
// its secrets: net/http's error quotes the whole URL, query token and
// Slack-style path secret included, and that text reaches sweep's JSON and
// the dashboard's Activity view.
func TestAnUnreachableWebhookIsNamedWithoutItsSecrets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the POST is refused
	n := &Notifier{}
	for _, u := range []string{
		"http://" + addr + "/services/T0A1B2C3D/B0E4F5G6H/QTokZZsecretPart",
		"http://" + addr + "/hooks/agent?token=QTokZZ",
		"http://bob:QTokZZ@" + addr + "/hooks/agent",
	} {
		err := n.Deliver(context.Background(), Target{Name: "n2", URL: u}, "stale")
		if err == nil || strings.Contains(err.Error(), "QTokZZ") || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v, want the address and the refusal without the secret", u, err)
		}
	}
}
