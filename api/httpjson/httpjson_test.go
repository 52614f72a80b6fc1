package httpjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
)

// Every code of package fault has its status in the one table (a code
// missing from it would be answered 500).
func TestEveryCodeHasAStatus(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../internal/fault/fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					continue
				}
				code := fault.Code(lit.Value[1 : len(lit.Value)-1])
				n++
				if _, ok := statuses[code]; !ok {
					t.Errorf("code %s has no status", code)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d codes in fault.go; is the parse right?", n)
	}
	if Status(fault.QuoteExpired) != http.StatusUnprocessableEntity || Status("no_such_code") != http.StatusInternalServerError {
		t.Error("Status does not read the table")
	}
}

// A coded error that says when to retry is answered with Retry-After, in
// whole seconds rounded up; one that does not has none.
func TestErrorsSayWhenToRetry(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := Responder{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fault.Error{Code: fault.RateLimited, Message: "later", RetryAfter: 90*time.Second + time.Millisecond}, "91"},
		{fault.New(fault.Conflict, "now"), ""},
	} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest("POST", "/x", nil)
		r.Error(c, tc.err)
		if got := w.Header().Get("Retry-After"); got != tc.want || w.Code != Status(tc.err.(*fault.Error).Code) {
			t.Errorf("%v: %d Retry-After %q, want %q", tc.err, w.Code, got, tc.want)
		}
	}
}
