package notionemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
)

// maxBodyBytes is Notion's documented request payload limit.
const maxBodyBytes = 500 * 1000

// object is a decoded JSON object whose members are decoded lazily, so that
// every member can be checked for its type and reported by its path the way
// Notion reports body validation failures.
type object map[string]json.RawMessage

// readObject reads the request body as a JSON object with only the allowed
// members. An empty body is an empty object: Notion accepts a query without
// a body.
func readObject(r *http.Request, allowed ...string) (object, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, newAPIError(http.StatusBadRequest, "invalid_request", fmt.Sprintf("reading request body: %v", err))
	}
	if len(data) > maxBodyBytes {
		return nil, validationError("Request body too large: the limit is %d bytes.", maxBodyBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil
	}
	if !json.Valid(data) {
		return nil, newAPIError(http.StatusBadRequest, "invalid_json", "Error parsing JSON body.")
	}
	body, err := asObject(data, "body")
	if err != nil {
		return nil, err
	}
	if err := body.onlyKeys("body", allowed...); err != nil {
		return nil, err
	}
	return body, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// shouldBe is Notion's wording for a member of the wrong type.
func shouldBe(path, what string, raw json.RawMessage) *apiError {
	shown := string(raw)
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	if len(raw) == 0 {
		shown = "undefined"
	}
	return validationError("body failed validation: %s should be %s, instead was `%s`.", path, what, shown)
}

func asObject(raw json.RawMessage, path string) (object, error) {
	var o object
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &o) == nil {
		return o, nil
	}
	return nil, shouldBe(path, "an object", raw)
}

func asArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) && json.Unmarshal(raw, &a) == nil {
		return a, nil
	}
	return nil, shouldBe(path, "an array", raw)
}

func asString(raw json.RawMessage, path string) (string, error) {
	var s string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	return "", shouldBe(path, "a string", raw)
}

func asBool(raw json.RawMessage, path string) (bool, error) {
	var b bool
	if !isNull(raw) && json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	return false, shouldBe(path, "a boolean", raw)
}

func asNumber(raw json.RawMessage, path string) (float64, error) {
	var f float64
	if !isNull(raw) && json.Unmarshal(raw, &f) == nil && !math.IsInf(f, 0) {
		return f, nil
	}
	return 0, shouldBe(path, "a number", raw)
}

// onlyKeys rejects members other than the allowed ones.
func (o object) onlyKeys(path string, allowed ...string) error {
	for k := range o {
		if !slices.Contains(allowed, k) {
			return validationError("body failed validation: %s.%s should not be present.", path, k)
		}
	}
	return nil
}

// single returns the one member of an object that must have exactly one,
// such as a filter condition ({"equals": "READY"}).
func (o object) single(path string) (string, json.RawMessage, error) {
	if len(o) == 1 {
		for key, value := range o {
			return key, value, nil
		}
	}
	return "", nil, validationError("body failed validation: %s should have exactly one condition, instead had %d.", path, len(o))
}
