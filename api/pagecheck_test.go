package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/testtool"
)

// axeDir is where npm installs axe-core for the page checks, pinned by
// its package-lock.json.
const axeDir = "testdata/axe"

// axeInstall installs axe-core once per test binary.
var axeInstall sync.Once

// axeSource returns axe-core's script, installing it with npm the first
// time (a test needing it fails in CI without npm, and skips outside).
func axeSource(t *testing.T) string {
	t.Helper()
	npm := testtool.Path(t, "the pages' accessibility is checked with axe-core, installed by npm", "npm")
	script := filepath.Join(axeDir, "node_modules", "axe-core", "axe.min.js")
	var installErr error
	axeInstall.Do(func() {
		if _, err := os.Stat(script); err == nil {
			return
		}
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		install.Dir = axeDir
		if out, err := install.CombinedOutput(); err != nil {
			installErr = fmt.Errorf("npm ci in %s: %v\n%s", axeDir, err, out)
		}
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	return string(b)
}

// axeViolation is a serious or critical finding of axe-core.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            []string
}

// axeViolations runs axe-core in the page ctx shows (name) and returns
// its serious and critical findings.
func axeViolations(t *testing.T, ctx context.Context, name string) []axeViolation {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axeSource(t)+";undefined")); err != nil {
		t.Fatalf("loading axe-core into %s: %v", name, err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
			({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core on %s: %v", name, err)
	}
	return found
}

// The check can fail: on a page with an unlabelled field, an image
// without words and text too faint to read, axe-core reports each.
func TestAxeFindsViolations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html lang="en"><title>bad</title><main><h1>Bad</h1><input type="text">` +
			`<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">` + `<p style="color:#eee;background:#fff">faint</p></main>`))
	}))
	t.Cleanup(srv.Close)
	ctx := newChromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range axeViolations(t, ctx, "a bad page") {
		ids = append(ids, v.ID)
	}
	for _, want := range []string{"label", "image-alt", "color-contrast"} {
		if !slices.Contains(ids, want) {
			t.Errorf("axe-core found %v on a bad page, want %s among them", ids, want)
		}
	}
}

// checkPage checks the page ctx shows as a person would meet it: axe-core
// finds no serious or critical accessibility violation in it (WCAG 2.1 A
// and AA rules and axe's best practices), and it fits a phone's screen
// (checkFits). With DOMAIND_SCREENSHOTS set to a folder (make
// screenshots), it also saves the page there as name-1280.png and
// name-390.png, a desktop's and a phone's width.
func checkPage(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	found := axeViolations(t, ctx, name)
	for _, v := range found {
		t.Errorf("%s: %s accessibility violation %s (%s) at %s", name, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, ", "))
	}
	checkFits(t, ctx, name)
	dir := os.Getenv("DOMAIND_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int64{1280, 390} {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900))
		var shot []byte
		if err == nil {
			shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot of %s at %d px: %v", name, width, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateReset()); err != nil {
		t.Fatal(err)
	}
}

// phoneWidth is the width, in CSS pixels, of the phone the pages are
// checked on.
const phoneWidth = 390

// checkFits fails when the page ctx shows is wider than a phone's screen:
// something in it runs past the edge (a secret or a URL that does not
// wrap, say), and the page scrolls sideways. A table scrolls in its own
// box and does not count. It names the elements that run past the edge.
func checkFits(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 900))
	var past []string
	if err == nil {
		past, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const edge = document.documentElement.clientWidth, out = [];
			if (document.documentElement.scrollWidth <= edge) return out;
			for (const el of document.body.querySelectorAll("*")) {
				const r = el.getBoundingClientRect();
				if (r.right > edge + 0.5 && !el.closest("table")) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " (" + Math.round(r.right) + " px)");
			}
			return out.length ? out : ["the page (" + document.documentElement.scrollWidth + " px)"];
		})()`))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.EmulateReset())
	}
	if err != nil {
		t.Fatalf("%s at %d px: %v", name, phoneWidth, err)
	}
	if len(past) > 0 {
		t.Errorf("%s is wider than a %d px screen: %s run past its edge", name, phoneWidth, strings.Join(past, ", "))
	}
}
