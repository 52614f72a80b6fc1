package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/testtool"
)

// A strict OAuth client (oauth4webapi, run by node) completes the whole
// flow against the service: it checks that the protected-resource metadata
// names the URL it called (RFC 9728 §3.3), that discovery answers for the
// issuer asked (RFC 8414 §3.3) and that the authorization response names
// its issuer (RFC 9207), where golang.org/x/oauth2 checks none of these.
func TestStrictOAuthClient(t *testing.T) {
	t.Parallel()
	node := testtool.Path(t, "the strict OAuth client (oauth4webapi) runs on node", "node")
	npm := testtool.Path(t, "it installs the strict OAuth client (oauth4webapi)", "npm")
	dir := installStrictClient(t, npm)

	srv := httptest.NewServer(nil)
	defer srv.Close()
	env := newTestEnv(t, func(c *config.Config) { c.BaseURL = mustURL(t, srv.URL) })
	srv.Config.Handler = env.srv
	newBrowser(t, env).signUp("strict@example.com", "long-enough-pw")

	cmd := exec.Command(node, filepath.Join(dir, "flow.mjs"), srv.URL, "strict@example.com", "long-enough-pw")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the strict client failed: %v\n%s", err, stderr.String())
	}
	var got struct {
		Metadata  string         `json:"resource_metadata"`
		ISS       string         `json:"iss"`
		Scope     string         `json:"scope"`
		APIStatus int            `json:"api_status"`
		Body      map[string]any `json:"body"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.Metadata != srv.URL+"/.well-known/oauth-protected-resource/api" || got.ISS != srv.URL || got.Scope != "pricing:read" || got.APIStatus != 200 || got.Body["service"] != "domaind" {
		t.Errorf("strict client = %+v, want iss %s, pricing:read and the API answering", got, srv.URL)
	}
}

// installStrictClient copies testdata/strictoauth into a cache directory
// and installs its locked dependencies there once (npm ci), returning it.
func installStrictClient(t *testing.T, npm string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "domaind-test-strictoauth-3.8.8")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json", "flow.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "strictoauth", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oauth4webapi", "package.json")); err == nil {
		return dir
	}
	install := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci of the strict client: %v\n%s", err, out)
	}
	return dir
}
