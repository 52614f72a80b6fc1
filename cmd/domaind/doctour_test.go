package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/testtool"
)

// docTours are the documents whose sh blocks a newcomer pastes, and the
// sections (## headings) that hold them.
var docTours = []struct {
	file     string
	sections []string
}{
	{"README.md", []string{"A short tour", "Partner API"}},
	{"docs/api.md", []string{"Public read API", "Accounts, developer keys and OAuth", "Marketplace listings", "Free tools",
		"Your domains and bulk operations"}},
}

// tourCommand is one command of a document's examples, and the answer it
// is shown with (the comment lines after it, or on its line).
type tourCommand struct {
	line  int // in the document
	shell string
	shown string
}

// tourCommands reads the sh blocks of the sections of a markdown document:
// one command per logical line (a line ending in a backslash goes on),
// with the JSON-like comment lines that show its answer.
func tourCommands(t *testing.T, doc string, sections []string) []tourCommand {
	t.Helper()
	var cmds []tourCommand
	inTour, inBlock, pending := false, false, false
	for i, ln := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(ln)
		switch {
		case strings.HasPrefix(ln, "## "):
			inTour = slices.Contains(sections, strings.TrimPrefix(ln, "## "))
			continue
		case strings.HasPrefix(trimmed, "```"):
			inBlock = inTour && trimmed == "```sh"
			continue
		case !inBlock:
			continue
		case pending:
			cmds[len(cmds)-1].shell += "\n" + ln
		case strings.HasPrefix(trimmed, "#"):
			if len(cmds) > 0 && strings.Contains(trimmed, "{") {
				cmds[len(cmds)-1].shown += strings.TrimPrefix(trimmed, "#") + "\n"
			}
		case trimmed != "":
			c := tourCommand{line: i + 1, shell: ln}
			if _, comment, ok := strings.Cut(ln, "   # "); ok && strings.Contains(comment, "{") {
				c.shown = comment
			}
			cmds = append(cmds, c)
		}
		pending = inBlock && strings.HasSuffix(trimmed, `\`)
	}
	if len(cmds) == 0 {
		t.Fatalf("no sh blocks in %v", sections)
	}
	return cmds
}

// shownPair is a key with its value as an answer is shown (a string
// without an ellipsis, or a whole number); shownKey a key alone.
var (
	shownPair = regexp.MustCompile(`"([a-zA-Z_]+)":("[^"…]*"|-?[0-9]+)[,}\]]`)
	shownKey  = regexp.MustCompile(`"([a-zA-Z_]+)":`)
)

// variesKeys are keys whose values change from one run to the next
// (times, durations, ids): their values are not compared.
var variesKeys = []string{"duration_ms", "took_ms", "created_at", "expires_at", "id", "jobId", "request_id", "next_cursor"}

// The README's tour and docs/api.md's examples work as pasted, in order,
// on a machine without the internet: each command, against its own
// `domaind all` on the embedded default with its printed ops password and
// partner key, answers 2xx (curl fails otherwise) unless the answer shown
// is a refusal, and every answer shown has the keys it shows with the
// names, states, prices and counts it shows. Only the steps marked "needs
// the internet" are left out.
func TestDocsWorkAsPasted(t *testing.T) {
	bash := testtool.Path(t, "the docs' examples are run with bash", "bash")
	curl := testtool.Path(t, "the docs' examples are run with curl", "curl")
	testtool.Path(t, "the partner API example signs with openssl", "openssl")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// curl fails on an HTTP error with its body, here and in partner-curl.sh.
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nexec " + curl + " --fail-with-body \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, doc := range docTours {
		t.Run(doc.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(root, doc.file))
			if err != nil {
				t.Fatal(err)
			}
			runTour(t, bash, bin, root, doc.file, tourCommands(t, string(text), doc.sections))
		})
	}
}

// runTour runs cmds in one bash, with the curl of bin, against a fresh
// `domaind all`, and checks each answer against the one shown.
func runTour(t *testing.T, bash, bin, root, file string, cmds []tourCommand) {
	t.Helper()
	addr := testtool.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	stdout, _, cancel, done := startEmbedded(t, map[string]string{"DOMAIND_DATA_DIR": t.TempDir(), "DOMAIND_HTTP_ADDR": addr})
	t.Cleanup(func() { cancel(); <-done })
	welcome := stdout.String()
	opsPassword := between(welcome, `password "`, `"`)
	keyID, secret := between(welcome, "Partner key    id ", " "), between(welcome, "secret ", " ")
	if opsPassword == "" || !strings.HasPrefix(keyID, "pk_test_") || !strings.HasPrefix(secret, "sk_") {
		t.Fatalf("the welcome text lacks the ops password or the partner key:\n%s", welcome)
	}
	var script strings.Builder
	fmt.Fprintf(&script, "set -e\nexport PATH=%s:$PATH DOMAIND_URL=http://localhost:%s\n", bin, port)
	var run []tourCommand
	for _, c := range cmds {
		if strings.Contains(c.shell, "# needs the internet") {
			continue
		}
		sh := strings.ReplaceAll(c.shell, "localhost:8080", "localhost:"+port)
		sh = strings.ReplaceAll(sh, "docs/examples/", root+"/docs/examples/")
		sh = strings.ReplaceAll(sh, "OPS_PASSWORD='…'", "OPS_PASSWORD='"+opsPassword+"'")
		sh = strings.ReplaceAll(sh, "DOMAIND_KEY_ID=pk_test_… DOMAIND_SECRET=sk_…", "DOMAIND_KEY_ID="+keyID+" DOMAIND_SECRET="+secret)
		if code, _, _ := strings.Cut(sh, " # "); strings.Contains(code, "…") {
			t.Errorf("%s:%d cannot be pasted as it is, it has a placeholder: %s", file, c.line, c.shell)
			continue
		}
		if strings.Contains(c.shown, `{"error":`) {
			sh += " || true" // the answer shown is a refusal
		}
		fmt.Fprintf(&script, "echo '@@@ %d'\n%s\necho\n", len(run), sh)
		run = append(run, c)
	}
	cmd := exec.Command(bash, "-c", script.String())
	cmd.Dir = t.TempDir() // the cookie jar and what else the examples write
	out, err := cmd.CombinedOutput()
	answers := strings.Split(string(out), "@@@ ")
	if err != nil {
		last := answers[len(answers)-1]
		at := tourCommand{shell: "before the first command"}
		if k, convErr := strconv.Atoi(strings.TrimSpace(strings.SplitN(last, "\n", 2)[0])); convErr == nil {
			at = run[k]
		}
		t.Fatalf("%s stopped at line %d (%s): %v\n%s", file, at.line, at.shell, err, last)
	}
	for _, a := range answers[1:] {
		k, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(a, "\n", 2)[0]))
		if err != nil {
			t.Fatalf("the output is out of step: %q", a)
		}
		c := run[k]
		for _, m := range shownKey.FindAllStringSubmatch(c.shown, -1) {
			if !strings.Contains(a, `"`+m[1]+`":`) {
				t.Errorf("%s:%d shows %q in its answer, which has none:\n%s\nanswer: %s", file, c.line, m[1], c.shown, a)
			}
		}
		for _, m := range shownPair.FindAllStringSubmatch(c.shown, -1) {
			if pair := `"` + m[1] + `":` + m[2]; !slices.Contains(variesKeys, m[1]) && !strings.Contains(a, pair) {
				t.Errorf("%s:%d shows %s in its answer, which says otherwise:\nanswer: %s", file, c.line, pair, a)
			}
		}
	}
}

// between is the text of s after the first from, up to the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
