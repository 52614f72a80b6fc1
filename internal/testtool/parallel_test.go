package testtool

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// owning are the helpers that hand a test its own database or Redis.
var owning = map[string]bool{
	"modelstest.NewDB": true, "modelstest.NewDBWithURL": true, "modelstest.NewEmptyDB": true,
	"platformtest.NewRedis": true,
}

// serialHelpers are the helpers whose tests run one at a time, each for
// the reason its doc comment gives: a Chromium per test, or the binary's
// processes per test.
var serialHelpers = map[string]bool{"newChromium": true, "newCluster": true}

// serialTests run one at a time for a reason of their own.
var serialTests = map[string]string{
	"TestChecksSurviveAFlushedScriptCache": "SCRIPT FLUSH empties the whole server's script cache",
	"TestWorkerOnADatabaseNotMigrated":     "it starts the binary's processes, as newCluster's tests do",
}

// TestTestsThatOwnTheirServersRunInParallel reads every test of the
// module: a test that gets its own database or Redis (through the helpers
// of modelstest and platformtest, directly or through a helper function
// of its package; helpers that are methods are not followed) calls
// t.Parallel, unless it is one of those that run one at a time, above.
func TestTestsThatOwnTheirServersRunInParallel(t *testing.T) {
	t.Parallel()
	byDir := map[string][]string{}
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != filepath.Join("..", "..") && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var serial []string
	checked := 0
	for _, files := range byDir {
		funcs := readFuncs(t, files)
		owns := reaching(funcs, func(call string) bool { return owning[call] })
		runsAlone := reaching(funcs, func(call string) bool { return serialHelpers[call] })
		for name, f := range funcs {
			if !f.test || !owns[name] {
				continue
			}
			checked++
			if !f.parallel && !runsAlone[name] && serialTests[name] == "" {
				serial = append(serial, f.at+" "+name)
			}
		}
	}
	sort.Strings(serial)
	for _, s := range serial {
		t.Errorf("%s gets its own database or Redis but does not call t.Parallel", s)
	}
	if checked < 100 {
		t.Errorf("found %d tests that get their own database or Redis; the reader misses some", checked)
	}
}

// testFunc is what the check needs of a function of a package.
type testFunc struct {
	at       string   // file:line
	test     bool     // a Test function of a _test.go file
	parallel bool     // it calls t.Parallel
	calls    []string // the functions it calls by name: f or pkg.F
}

// readFuncs reads the functions (not methods) of one directory's files.
func readFuncs(t *testing.T, files []string) map[string]*testFunc {
	fset := token.NewFileSet()
	funcs := map[string]*testFunc{}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			tf := &testFunc{at: fset.Position(fd.Pos()).String(),
				test: strings.HasSuffix(path, "_test.go") && strings.HasPrefix(fd.Name.Name, "Test")}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fn := call.Fun.(type) {
				case *ast.Ident:
					tf.calls = append(tf.calls, fn.Name)
				case *ast.SelectorExpr:
					if x, ok := fn.X.(*ast.Ident); ok {
						tf.calls = append(tf.calls, x.Name+"."+fn.Sel.Name)
						tf.parallel = tf.parallel || (x.Name == "t" && fn.Sel.Name == "Parallel")
					}
				}
				return true
			})
			funcs[fd.Name.Name] = tf
		}
	}
	return funcs
}

// reaching is the functions of funcs that call one that is, by match,
// directly or through others of funcs.
func reaching(funcs map[string]*testFunc, match func(call string) bool) map[string]bool {
	reached := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, f := range funcs {
			if reached[name] {
				continue
			}
			for _, c := range f.calls {
				if match(c) || reached[c] {
					reached[name], changed = true, true
					break
				}
			}
		}
	}
	return reached
}
