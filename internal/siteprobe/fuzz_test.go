package siteprobe

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// FuzzClassify feeds Classify hostile answers, seeded with the recorded
// pages: it must not panic, and its verdict must hold together.
func FuzzClassify(f *testing.F) {
	files, err := filepath.Glob("testdata/*.html")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(200, "text/html", b)
	}
	f.Add(200, "text/html; charset=windows-1251", []byte("<p>\xcf\xf0\xe8\xe2\xe5\xf2"))
	f.Add(200, "", []byte(`<meta http-equiv="refresh" content="0;url=`))
	f.Add(404, "application/json", []byte(`{}`))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		v := Classify(status, http.Header{"Content-Type": {contentType}}, body)
		if v.Reason == "" || v.Signal == "" {
			t.Errorf("Classify = %+v: want a reason and what decided it", v)
		}
		if (v.Reason == ReasonClientRedirect) != (v.Redirect != "") {
			t.Errorf("Classify = %+v: a redirect target goes with client_redirect, and only with it", v)
		}
	})
}
