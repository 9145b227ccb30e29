package tool

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const editSchema = `{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean","default":false}},"required":["file_path","old_string","new_string"],"additionalProperties":false}`

func TestValidate(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(editSchema))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in, want string
		issues         []string
	}{
		{name: "defaults first, model order kept", in: `{"file_path":"/a","old_string":"x","new_string":"y"}`,
			want: `{"replace_all":false,"file_path":"/a","old_string":"x","new_string":"y"}`},
		{name: "given default kept", in: `{"new_string":"y","old_string":"x","file_path":"/a","replace_all":true}`,
			want: `{"new_string":"y","old_string":"x","file_path":"/a","replace_all":true}`},
		{name: "missing and unexpected", in: `{"path":"/a","old_string":"x","new_string":"y"}`, issues: []string{
			"The required parameter `file_path` is missing", "An unexpected parameter `path` was provided"}},
		{name: "wrong type", in: `{"file_path":3,"old_string":"x","new_string":"y"}`, issues: []string{
			"The parameter `file_path` type is expected as `string` but provided as `integer`"}},
		{name: "not an object", in: `[1]`, issues: []string{"The input must be a JSON object"}},
		{name: "empty input", in: ``, issues: []string{
			"The required parameter `file_path` is missing", "The required parameter `old_string` is missing", "The required parameter `new_string` is missing"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Validate("Edit", json.RawMessage(tc.in))
			var ve *ValidationError
			if tc.issues != nil {
				if !errors.As(err, &ve) {
					t.Fatalf("err = %v, want a ValidationError", err)
				}
				if diff := cmp.Diff(tc.issues, ve.Issues); diff != "" {
					t.Errorf("issues (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("Validate = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestNewInfersSchema(t *testing.T) {
	type in struct {
		Path  string   `json:"path" jsonschema:"where"`
		Limit int      `json:"limit,omitempty"`
		Tags  []string `json:"tags,omitempty"`
	}
	tl := New("t", "desc", func(ctx context.Context, v in, c *Call) (Result, error) {
		return Text(v.Path), nil
	}, &Options{ReadOnly: true})
	if err := Check(tl); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"path":{"type":"string","description":"where"},"limit":{"type":"integer"},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`
	if got := string(tl.Info().InputSchema); got != want {
		t.Errorf("schema = %s\nwant %s", got, want)
	}
	res, err := tl.Run(context.Background(), &Call{Input: json.RawMessage(`{"path":"/x"}`)})
	if err != nil || res.Text() != "/x" {
		t.Errorf("Run = %+v, %v", res, err)
	}
	bad := New[chan int]("bad", "", func(context.Context, chan int, *Call) (Result, error) { return Result{}, nil }, nil)
	if Check(bad) == nil {
		t.Error("a tool over a channel type has no configuration error")
	}
	if Check(New[in]("nil", "", nil, nil)) == nil {
		t.Error("a nil handler is accepted")
	}
}

func FuzzValidate(f *testing.F) {
	s, err := CompileSchema(json.RawMessage(editSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"file_path":"/a","old_string":"x","new_string":"y"}`))
	f.Add([]byte(`{"file_path":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := s.Validate("Edit", b)
		if err == nil && !json.Valid(out) {
			t.Errorf("valid input produced invalid JSON %q", out)
		}
	})
}
