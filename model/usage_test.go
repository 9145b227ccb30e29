package model

import "testing"

// TestErrorTypeForStatus pins the status vocabulary and that Kind reads
// each type as the status says.
func TestErrorTypeForStatus(t *testing.T) {
	for status, want := range map[int]string{400: "invalid_request_error", 401: "authentication_error",
		402: "billing_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large",
		429: "rate_limit_error", 500: "api_error", 503: "api_error", 504: "timeout_error", 529: "overloaded_error",
		418: "invalid_request_error"} {
		if got := ErrorTypeForStatus(status); got != want {
			t.Errorf("ErrorTypeForStatus(%d) = %q, want %q", status, got, want)
		}
		byStatus := (&APIError{Status: status}).Kind()
		byType := (&APIError{Type: ErrorTypeForStatus(status)}).Kind()
		if status != 403 && status != 413 && status != 418 && status != 504 && byStatus != byType {
			t.Errorf("status %d: Kind by status %q, by type %q", status, byStatus, byType)
		}
	}
}
