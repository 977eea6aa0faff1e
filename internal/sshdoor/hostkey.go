package sshdoor

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"

	"github.com/claimdeck/claimdeck/sources"
)

// HostKeyFile is the host key's name in the data directory.
const HostKeyFile = "ssh_host_ed25519_key"

// LoadHostKey reads the server's private host key at path, or makes an
// ed25519 one there on first start (mode 0600, its directory 0700 when
// made here) with its public half beside it (path.pub) to hand to the
// people who connect. A key that others may read is refused: whoever
// reads it can pose as this server.
func LoadHostKey(path string) (gossh.Signer, error) {
	if path == "" {
		return nil, errors.New("no host key path: give the file the server's key is kept in (made on first start)")
	}
	data, fi, err := sources.ReadShared(path, sources.SharedRead{What: "host key", Limit: 64 << 10})
	if errors.Is(err, fs.ErrNotExist) {
		return makeHostKey(path)
	}
	if err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("host key %s may be read by others (mode %#o): whoever reads it can pose as this server: chmod 600 %s", path, perm, path)
	}
	signer, err := gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("host key %s cannot be read as an unencrypted OpenSSH private key (%v): remove it to have a new one made, and tell the people who connect its new fingerprint", path, err)
	}
	return signer, nil
}

// makeHostKey makes and writes a new ed25519 host key at path. O_EXCL:
// two servers starting at once never overwrite each other's key.
func makeHostKey(path string) (gossh.Signer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("host key directory %s: %w", filepath.Dir(path), err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, "claimdeck ssh host key")
	if err != nil {
		return nil, err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadHostKey(path) // another server made it first: use that one
	}
	if err != nil {
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	_, err = f.Write(pem.EncodeToMemory(block))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	if err := os.WriteFile(path+".pub", gossh.MarshalAuthorizedKey(signer.PublicKey()), 0o644); err != nil {
		return nil, fmt.Errorf("host key's public half %s.pub: %w", path, err)
	}
	return signer, nil
}
