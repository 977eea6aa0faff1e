package sshdoor

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// newKey is a fresh ed25519 key pair: the signer and its authorized_keys
// line without the newline.
func newKey(t testing.TB, comment string) (gossh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey())))
	if comment != "" {
		line += " " + comment
	}
	return s, line
}

func TestParseKeysReadsPeopleRolesAndFingerprints(t *testing.T) {
	alice, aliceKey := newKey(t, "alice@laptop")
	alicePhone, alicePhoneKey := newKey(t, "")
	bob, bobKey := newKey(t, "bob@phone two words")
	stranger, _ := newKey(t, "")
	file := "# the on-call rota\n\n" +
		"alice oncall " + aliceKey + "\n" +
		"  alice\tviewer\t" + alicePhoneKey + "\r\n" + // tabs, CRLF, indented
		"bob viewer " + bobKey + "\n" +
		"   # an indented comment\n"
	k, err := ParseKeys("keys", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() != 3 {
		t.Fatalf("Len = %d, want 3", k.Len())
	}
	for _, c := range []struct {
		key           gossh.Signer
		person        string
		role          Role
		comment       string
		line          int
		readOnly      bool
		wantFingerpri string
	}{
		{alice, "alice", OnCall, "alice@laptop", 3, false, gossh.FingerprintSHA256(alice.PublicKey())},
		{alicePhone, "alice", Viewer, "", 4, true, gossh.FingerprintSHA256(alicePhone.PublicKey())},
		{bob, "bob", Viewer, "bob@phone two words", 5, true, gossh.FingerprintSHA256(bob.PublicKey())},
	} {
		id, ok := k.Lookup(c.key.PublicKey())
		if !ok {
			t.Fatalf("%s's key on line %d not found", c.person, c.line)
		}
		if id.Person != c.person || id.Role != c.role || id.Comment != c.comment || id.Line != c.line || id.Fingerprint != c.wantFingerpri {
			t.Errorf("line %d: got %+v", c.line, id)
		}
		if !strings.HasPrefix(id.Fingerprint, "SHA256:") {
			t.Errorf("fingerprint %q does not read as ssh-keygen's", id.Fingerprint)
		}
		s := Session{Role: id.Role}
		if s.ReadOnly() != c.readOnly {
			t.Errorf("%s as %s: ReadOnly = %v", c.person, c.role, s.ReadOnly())
		}
	}
	if _, ok := k.Lookup(stranger.PublicKey()); ok {
		t.Error("a key not in the file was found")
	}
}

func TestParseKeysRefusesBadLinesWithTheirNumbers(t *testing.T) {
	_, key := newKey(t, "c")
	_, other := newKey(t, "")
	priv, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	weak, err := gossh.NewPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	weakLine := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(weak)))
	fields := strings.Fields(key)
	for _, c := range []struct {
		name, file string
		want       []string
	}{
		{"bad role", "# x\nalice admin " + key, []string{"line 2", `role "admin"`, "oncall", "viewer"}},
		{"no role", "alice " + key, []string{"line 1", `person "alice" has no role`}},
		{"person only", "alice", []string{"line 1", "no role and no key"}},
		{"no key", "alice oncall", []string{"line 1", "has no key"}},
		{"key first", key, []string{"line 1", "starts with the key type", "PERSON ROLE"}},
		{"broken key", "alice oncall " + fields[0] + " AAAAnotbase64!!", []string{"line 1", "is not an SSH public key"}},
		{"key type only", "alice oncall ssh-ed25519", []string{"line 1", "is not an SSH public key"}},
		{"options", "alice oncall command=\"/bin/sh\" " + key, []string{"line 1", "options before the key", "command="}},
		{"weak rsa", "alice oncall " + weakLine, []string{"line 1", "1024-bit RSA"}},
		{"human prefix", "HUMAN:alice oncall " + key, []string{"line 1", "HUMAN:"}},
		{"via http", "alice@mcp-http oncall " + key, []string{"line 1", "@mcp-http"}},
		{"invisible person", "al\u200bice oncall " + key, []string{"line 1", "invisible"}},
		{"not utf-8", "alice oncall " + key + "\xff", []string{"line 1", "UTF-8"}},
		{"key of two people", "alice oncall " + key + "\nbob oncall " + key, []string{"line 2", "is alice's on line 1", "one key, one person"}},
		{"key with two roles", "alice oncall " + key + "\nalice viewer " + key, []string{"line 2", "on line 1 too, as oncall"}},
		{"key twice", "alice oncall " + key + "\n\nalice oncall " + key, []string{"line 3", "repeats line 1"}},
		{"every bad line", "alice admin " + key + "\nbob oncall " + other + "\ncarol\n", []string{"line 1", "line 3", "nothing was changed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := ParseKeys("/etc/claimdeck/ssh-keys", []byte(c.file))
			if err == nil {
				t.Fatalf("accepted %q (%d keys)", c.file, k.Len())
			}
			msg := err.Error()
			for _, w := range append(c.want, "/etc/claimdeck/ssh-keys") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestParseKeysCountsBadLinesPastTen(t *testing.T) {
	file := strings.Repeat("alice admin\n", 25)
	_, err := ParseKeys("keys", []byte(file))
	if err == nil || !strings.Contains(err.Error(), "line 10:") || strings.Contains(err.Error(), "line 11:") || !strings.Contains(err.Error(), "and 15 more bad lines") {
		t.Fatalf("err = %v", err)
	}
}

// The fingerprint a session carries is the one ssh-keygen -lf prints for
// the same key, so a trail line can be matched to the key by hand.
func TestFingerprintIsSshKeygens(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "carol@desk", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKeys("keys", []byte("carol oncall "+string(pub)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-lf", path+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))[1]
	for _, id := range k.byKey {
		if id.Fingerprint != want || id.Comment != "carol@desk" {
			t.Fatalf("fingerprint %s comment %q, ssh-keygen says %s", id.Fingerprint, id.Comment, want)
		}
	}
}

func TestLoadKeysRefusesAFileOthersMayWrite(t *testing.T) {
	_, key := newKey(t, "")
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("alice oncall "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeys(path); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode os.FileMode
		who  string
	}{{0o620, "its group"}, {0o602, "others"}, {0o666, "its group and others"}} {
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKeys(path)
		if err == nil || !strings.Contains(err.Error(), "writable by "+c.who) || !strings.Contains(err.Error(), "chmod go-w") {
			t.Errorf("mode %#o: err = %v", c.mode, err)
		}
	}
	if _, err := LoadKeys(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: err = %v", err)
	}
}

// FuzzParseKeys: any input parses or is refused with a line number,
// never a panic; what parses holds only valid people and roles, and
// parses the same again.
func FuzzParseKeys(f *testing.F) {
	_, key := newKey(f, "alice@laptop")
	for _, s := range []string{
		"alice oncall " + key,
		"# c\n\nbob viewer " + key + "\r\n",
		"alice admin " + key,
		"alice oncall " + key + "\nbob oncall " + key,
		"alice oncall command=\"x\" " + key,
		"alice\toncall\t" + key,
		"alice oncall ssh-ed25519 AAAA",
		"",
		"\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseKeys("keys", data)
		if err != nil {
			if k != nil {
				t.Fatal("keys and an error")
			}
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, id := range k.byKey {
			if id.Person == "" || (id.Role != OnCall && id.Role != Viewer) || !strings.HasPrefix(id.Fingerprint, "SHA256:") || id.Line < 1 {
				t.Fatalf("parsed %+v", id)
			}
			if strings.ContainsAny(id.Person, " \t\r\n") {
				t.Fatalf("person %q holds a space", id.Person)
			}
		}
		again, err := ParseKeys("keys", data)
		if err != nil || again.Len() != k.Len() {
			t.Fatalf("a second parse differs: %v", err)
		}
	})
}
