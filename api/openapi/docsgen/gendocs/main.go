// Command gendocs writes what is generated from the OpenAPI document as
// written (openapi.yaml): the document completed with the answers common
// to every operation (openapi.gen.yaml, which the service serves), its
// JSON and its HTML reference page (go generate ./api/openapi runs it).
package main

import (
	"fmt"
	"os"

	"github.com/domaind/domaind/api/openapi/docsgen"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func generate() error {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		return err
	}
	doc, err := docsgen.Complete(src)
	if err != nil {
		return err
	}
	json, err := docsgen.JSON(doc)
	if err != nil {
		return err
	}
	page, err := docsgen.Render(doc)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"openapi.gen.yaml": doc, "openapi.gen.json": json, "docs.gen.html": page} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
