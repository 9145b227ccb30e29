package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

// runSDKRunner runs cfg.sessions concurrent sessions of anthropic-sdk-go's
// tool runner (BetaToolRunner, DisableThread: the whole history in each
// request, as agentloop sends it) with sdkRead as its one tool, on the
// same transport, server and script as runInproc, and measures them the
// same way. The runner has none of agentloop's system prompt, permission
// checks, hooks or transcripts: it is the floor a Go loop of this API
// stands on.
func runSDKRunner(ctx context.Context, cfg *config, rec *result.Record) error {
	tr, err := newTransport(cfg)
	if err != nil {
		return err
	}
	if cfg.client == clientShipped {
		// What sdk.NewClient uses when given no client (its
		// requestconfig.DefaultHTTPClient): a clone of
		// http.DefaultTransport, 2 idle connections per host, with a
		// response-header timeout; only the run's certificate is added.
		base, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			return fmt.Errorf("http.DefaultTransport is a %T", http.DefaultTransport)
		}
		tr = base.Clone()
		tr.ResponseHeaderTimeout = 10 * time.Minute
		trustRunCert(cfg, tr)
	}
	client := sdk.NewClient(
		option.WithBaseURL(cfg.serverURL),
		option.WithAPIKey("sk-bench"),
		option.WithHTTPClient(&http.Client{Transport: &timingTransport{base: tr}}),
		option.WithMaxRetries(0),
	)
	tools := []sdk.BetaTool{sdkRead{}}
	return runSessions(ctx, cfg, rec, func(ctx context.Context, tl *timeline) error {
		runner := client.Beta.Messages.NewToolRunner(tools, sdk.BetaToolRunnerParams{
			BetaMessageNewParams: sdk.BetaMessageNewParams{
				Model:     "claude-opus-5-5",
				MaxTokens: 4096, // the SDK refuses a non-streaming request that could run over 10 minutes
				Messages:  []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock(cfg.prompt))},
			},
			DisableThread: true,
		})
		msg, err := runner.RunToCompletion(ctx)
		if err != nil {
			return fmt.Errorf("sdk runner: %w", err)
		}
		if len(msg.Content) == 0 || msg.Content[0].Text != script.Answer {
			return fmt.Errorf("sdk runner: final message %v, want the script's answer", msg.Content)
		}
		return nil
	})
}

// sdkRead is a Read tool for the SDK's runner: the file's lines numbered
// as agentloop's Read numbers them (a right-aligned number and a tab), so
// the two send histories of about the same size.
type sdkRead struct{}

func (sdkRead) Name() string        { return "Read" }
func (sdkRead) Description() string { return "Reads a file from the local filesystem." }

func (sdkRead) InputSchema() sdk.BetaToolInputSchemaParam {
	return sdk.BetaToolInputSchemaParam{
		Properties: map[string]any{"file_path": map[string]any{"type": "string", "description": "The absolute path of the file"}},
		Required:   []string{"file_path"},
	}
}

func (sdkRead) Execute(ctx context.Context, input json.RawMessage) ([]sdk.BetaToolResultBlockParamContentUnion, error) {
	var in struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	data, err := os.ReadFile(in.FilePath)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		fmt.Fprintf(&out, "%6d\t%s\n", n, sc.Text())
	}
	return []sdk.BetaToolResultBlockParamContentUnion{{OfText: &sdk.BetaTextBlockParam{Text: out.String()}}}, nil
}
