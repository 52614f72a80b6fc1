package httpjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"testing"

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
