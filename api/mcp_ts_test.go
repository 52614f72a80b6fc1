package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/testtool"
)

// The MCP TypeScript SDK's client (testdata/mcp-ts-client) goes through
// the same flow as the Go SDK's: the challenge, discovery, registration,
// consent, token, tools/list and tool calls. It needs Node.js and npm
// (the SDK is installed from the npm registry into testdata, pinned by
// its package-lock.json); without them the test is skipped, saying so,
// outside CI (package testtool).
func TestMCPTypeScriptClient(t *testing.T) {
	node := testtool.Path(t, "the MCP TypeScript SDK's client is tested with Node.js and npm", "node")
	npm := testtool.Path(t, "the MCP TypeScript SDK is installed with npm", "npm")
	dir, err := filepath.Abs("testdata/mcp-ts-client")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	t.Parallel()
	env, srv := servedEnv(t)
	seedTLDs(t, env)
	b := signedInBrowser(t, env, "ts-agent-owner@example.com")
	// The consent helper hands the authorization URL the script posts to
	// the test's goroutine, which approves it in the signed-in browser,
	// and answers the code.
	urls, codes := make(chan string), make(chan string)
	helper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authURL, _ := io.ReadAll(r.Body)
		select {
		case urls <- string(authURL):
		case <-r.Context().Done(): // the script was stopped
			return
		}
		select {
		case code := <-codes:
			io.WriteString(w, code)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(helper.Close)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", srv.URL, helper.URL)
	cmd.Dir = dir
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := cmd.Output()
		done <- result{out, err}
	}()
	var res result
	for waiting := true; waiting; {
		select {
		case u := <-urls:
			codes <- consent(t, b, u, "approve").Query().Get("code")
		case res = <-done:
			waiting = false
		}
	}
	out, err := res.out, res.err
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node client.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Tools []string `json:"tools"`
		Price struct {
			TLD        string `json:"tld"`
			PriceCents *int64 `json:"price_cents"`
		} `json:"price"`
		Bad struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"bad"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the script printed %s: %v", out, err)
	}
	want := []string{"marketplace_listings", "search_domains", "suggest_domains", "tld_pricing", "tld_requirements", "whois_lookup"}
	if !slices.Equal(got.Tools, want) || got.Price.TLD != "com" || got.Price.PriceCents == nil || !got.Bad.IsError ||
		!strings.Contains(got.Bad.Text, "/properties/op: enum: buy does not equal any of: [register renew transfer restore]") {
		t.Errorf("the TypeScript client saw %s", out)
	}
}
