package serve_test

import (
	"net/http"
	"strings"
	"testing"
)

// A create request with a blank model is refused (400 naming the model)
// and nothing is stored; an absent or empty model is the default.
func TestCreateBlankModel(t *testing.T) {
	e := newEnv(t, nil)
	code, out := e.do("POST", "/v1/sessions", tokenA, `{"model":"   "}`)
	if code != http.StatusBadRequest || !strings.Contains(string(out), "model") {
		t.Errorf(`model "   ": %d %s, want 400 naming the model`, code, out)
	}
	if l := e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil); len(l["sessions"].([]any)) != 0 {
		t.Errorf("sessions stored: %v", l)
	}
	e.must(http.StatusCreated, "POST", "/v1/sessions", tokenA, `{}`)
}
