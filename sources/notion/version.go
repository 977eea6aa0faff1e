package notion

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// APIVersion is the Notion-Version this source sends on every request.
func (s *Source) APIVersion() string { return s.api.version }

// probeKey carries the Notion-Version one probing request sends instead of
// the source's own.
type probeKey struct{}

// probing is the version ctx asks a request to send, "" for the source's.
func probing(ctx context.Context) string {
	v, _ := ctx.Value(probeKey{}).(string)
	return v
}

// ProbeVersion asks Notion whether the workspace answers version: one
// data source query for a single page and its title alone, read-only, with
// that Notion-Version header instead of the source's. nil means the query
// was answered; otherwise the error is Notion's refusal (or the network's).
func (s *Source) ProbeVersion(ctx context.Context, version string) error {
	const op = "doctor"
	if v, err := CheckVersion(version); err != nil || v != version {
		return fmt.Errorf("probing Notion: %q is not a version claimdeck speaks", version)
	}
	ctx, done := s.begin(ctx)
	defer done()
	ctx = context.WithValue(ctx, probeKey{}, version)
	req := map[string]any{"page_size": 1}
	path := "/v1/data_sources/" + s.ds + "/query?" + url.Values{"filter_properties": {s.m.ids[s.m.Title]}}.Encode()
	return s.failOrNil(op, "", s.api.do(ctx, http.MethodPost, path, req, nil))
}

// DoctorVersion is the doctor's line on the Notion API: the version the
// source speaks and whether the workspace answers VersionTitleOnly. Its
// error is only for the version the source speaks being refused; a
// workspace that does not answer the next version yet is reported in the
// detail, since the source does not send it.
func (s *Source) DoctorVersion(ctx context.Context) (detail string, err error) {
	v := s.APIVersion()
	if err := s.ProbeVersion(ctx, v); err != nil {
		return "", fmt.Errorf("speaks Notion API %s, which the workspace refuses: %w", v, err)
	}
	if v == VersionTitleOnly {
		return "speaks Notion API " + v, nil
	}
	if err := s.ProbeVersion(ctx, VersionTitleOnly); err != nil {
		return fmt.Sprintf("speaks Notion API %s; the workspace does not answer %s yet (%v)", v, VersionTitleOnly, err), nil
	}
	return fmt.Sprintf("speaks Notion API %s; the workspace also answers %s (api_version: %s switches to it)", v, VersionTitleOnly, VersionTitleOnly), nil
}
