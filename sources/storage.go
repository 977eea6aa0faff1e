package sources

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/claimdeck/claimdeck/model"
)

// ErrCredentials is the cause of an error where the backend refused who we
// are (a wrong password, an unknown role, a revoked token): `doctor` shows
// it on its credentials line.
var ErrCredentials = errors.New("the backend refuses these credentials")

// StorageErr codes an error of the storage under a backend (files, a
// database file): a refusal to write — permissions, a read-only or
// immutable file system — is MISCONFIGURED, since retrying cannot fix it
// and someone must; anything else is API_ERROR, worth a retry.
func StorageErr(op, id string, err error) error {
	if err == nil {
		return nil
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return model.Errorf(model.CodeMisconfigured, op, id, "the storage refuses writes (read-only, immutable, or not this user's to write): %w", err)
	}
	return model.Wrap(model.CodeAPIError, op, id, err)
}
