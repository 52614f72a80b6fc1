// Command gendocs writes what is generated from the embedded OpenAPI
// document: its JSON and its HTML reference page (go generate
// ./api/openapi runs it).
package main

import (
	"fmt"
	"os"

	"github.com/domaind/domaind/api/openapi"
	"github.com/domaind/domaind/api/openapi/docsgen"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func generate() error {
	json, err := docsgen.JSON(openapi.Spec())
	if err != nil {
		return err
	}
	page, err := docsgen.Render(openapi.Spec())
	if err != nil {
		return err
	}
	if err := os.WriteFile("openapi.gen.json", json, 0o644); err != nil {
		return err
	}
	return os.WriteFile("docs.gen.html", page, 0o644)
}
