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

// tourCommand is one command of the README's tour, and the shape its
// answer is shown with (the comment lines after it, or on its line).
type tourCommand struct {
	line  int // in README.md
	shell string
	shown string
}

// tourSections are the README sections whose sh blocks are the tour a
// newcomer pastes.
var tourSections = []string{"A short tour", "Partner API"}

// tourCommands reads the sh blocks of the README's tour sections: one
// command per logical line (a line ending in a backslash goes on), with
// the JSON-like comment lines that show its answer.
func tourCommands(t *testing.T, readme string) []tourCommand {
	t.Helper()
	var cmds []tourCommand
	inTour, inBlock, pending := false, false, false
	for i, ln := range strings.Split(readme, "\n") {
		trimmed := strings.TrimSpace(ln)
		switch {
		case strings.HasPrefix(ln, "## "):
			inTour = slices.Contains(tourSections, strings.TrimPrefix(ln, "## "))
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
		t.Fatalf("README.md has no sh blocks in %v", tourSections)
	}
	return cmds
}

var shownKey = regexp.MustCompile(`"([a-z_A-Z]+)":`)

// The README's tour works as pasted, in order, on a machine without the
// internet: each command, against `domaind all` on the embedded default
// with its printed ops password and partner key, answers 2xx (curl fails
// otherwise), and every answer the README shows has the keys it shows.
// Only the steps marked "needs the internet" are left out.
func TestReadmeTourAsPasted(t *testing.T) {
	bash := testtool.Path(t, "the README's tour is run with bash", "bash")
	curl := testtool.Path(t, "the README's tour is run with curl", "curl")
	testtool.Path(t, "the partner API example signs with openssl", "openssl")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
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
	var script strings.Builder
	fmt.Fprintf(&script, "set -e\nexport PATH=%s:$PATH DOMAIND_URL=http://localhost:%s\n", bin, port)
	cmds := tourCommands(t, string(readme))
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
			t.Errorf("README.md:%d cannot be pasted as it is, it has a placeholder: %s", c.line, c.shell)
			continue
		}
		fmt.Fprintf(&script, "echo '@@@ %d'\n%s\necho\n", len(run), sh)
		run = append(run, c)
	}
	if len(run) < 15 {
		t.Fatalf("only %d commands of the tour found", len(run))
	}
	cmd := exec.Command(bash, "-c", script.String())
	cmd.Dir = t.TempDir() // the cookie jar and anything else the tour writes
	out, err := cmd.CombinedOutput()
	answers := strings.Split(string(out), "@@@ ")
	if err != nil {
		last := answers[len(answers)-1]
		at := tourCommand{shell: "before the first command"}
		if k, convErr := strconv.Atoi(strings.TrimSpace(strings.SplitN(last, "\n", 2)[0])); convErr == nil {
			at = run[k]
		}
		t.Fatalf("the tour stopped at README.md:%d (%s): %v\n%s", at.line, at.shell, err, last)
	}
	for _, a := range answers[1:] {
		k, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(a, "\n", 2)[0]))
		if err != nil {
			t.Fatalf("the tour's output is out of step: %q", a)
		}
		c := run[k]
		for _, m := range shownKey.FindAllStringSubmatch(c.shown, -1) {
			if !strings.Contains(a, `"`+m[1]+`":`) {
				t.Errorf("README.md:%d shows %q in its answer, which has none:\n%s\nanswer: %s", c.line, m[1], c.shown, a)
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
