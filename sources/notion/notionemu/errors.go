package notionemu

import (
	"fmt"
	"net/http"
)

// apiError is an error that reaches the client as Notion's error object:
// {"object":"error","status":400,"code":"validation_error","message":"..."}.
type apiError struct {
	Status  int
	Code    string
	Message string
	// Additional is Notion's "additional_data" object, when it sends one.
	Additional map[string]any
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func (e *apiError) body(requestID string) map[string]any {
	out := map[string]any{
		"object":     "error",
		"status":     e.Status,
		"code":       e.Code,
		"message":    e.Message,
		"request_id": requestID,
	}
	if e.Additional != nil {
		out["additional_data"] = e.Additional
	}
	return out
}

func validationError(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "validation_error", fmt.Sprintf(format, args...))
}

func notFound(kind, id string) *apiError {
	return newAPIError(http.StatusNotFound, "object_not_found", fmt.Sprintf(
		"Could not find %s with ID: %s. Make sure the relevant pages and databases are shared with your integration.", kind, id))
}

// faultCodes are the failures that fault injection may answer with, and the
// code real Notion puts in each one's body.
var faultCodes = map[int]string{
	http.StatusInternalServerError: "internal_server_error",
	http.StatusBadGateway:          "bad_gateway",
	http.StatusServiceUnavailable:  "service_unavailable",
	http.StatusGatewayTimeout:      "gateway_timeout",
	StatusServiceOverload:          "service_overload",
	http.StatusTooManyRequests:     "rate_limited",
	http.StatusConflict:            "conflict_error",
}

// StatusServiceOverload is the non-standard status Notion answers with when
// it sheds load; its code is "service_overload".
const StatusServiceOverload = 529

func newAPIError(status int, code, message string) *apiError {
	return &apiError{Status: status, Code: code, Message: message}
}

// The rate_limit_reason values the emulator sends in a 429's
// additional_data: Notion enforces a per-connection budget per 60-second
// window and a limit shared by every connection of the workspace, and
// "additional_data.rate_limit_reason says which limit was exceeded"; other
// values "can appear" and are to be handled like any other 429
// (https://developers.notion.com/reference/request-limits).
const (
	ReasonConnection = "connection_rate_limit"
	ReasonWorkspace  = "workspace_rate_limit"
)

// rateLimited is the 429 of the limit named by reason.
func rateLimited(reason string) *apiError {
	e := newAPIError(http.StatusTooManyRequests, "rate_limited", "You have been rate limited. Please try again in a few minutes.")
	e.Additional = map[string]any{"rate_limit_reason": reason}
	return e
}

// blockLimitReached is the refusal of a block-creating request in a Free
// workspace past its block limit. Notion's reference names the refusal
// ("requests that create blocks fail", a plan restriction) without
// printing its body here: the emulator answers 403 restricted_resource
// with a message naming the block limit, which is what the client keys on
// (https://developers.notion.com/reference/workspace-block-limits).
func blockLimitReached(n int) *apiError {
	return newAPIError(http.StatusForbidden, "restricted_resource", fmt.Sprintf(
		"This workspace has reached its block limit (%d blocks on the Free plan). Upgrade the workspace to create more blocks.", n))
}
