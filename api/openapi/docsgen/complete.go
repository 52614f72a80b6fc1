package docsgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pb33f/go-yaml"
)

// Complete returns the document src (YAML) with the answers the service's
// middleware gives on every route written into each operation, so that the
// document as written lists only what is particular to an operation:
// every operation that takes a body (POST, PUT, PATCH) may be refused with
// 413 for a body over the limit, in the shape of its other errors (the
// OAuth endpoints' shape when its 400 is OAuthBadRequest). An operation
// that lists its own 413 keeps it.
func Complete(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	paths := lookup(&root, "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("openapi: the document has no paths")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method, op := item.Content[j].Value, item.Content[j+1]
			if !takesBody[method] {
				continue
			}
			responses := lookup(op, "responses")
			if responses == nil {
				return nil, fmt.Errorf("openapi: %s %s has no responses", strings.ToUpper(method), paths.Content[i].Value)
			}
			if lookup(responses, "413") != nil {
				continue
			}
			tooLarge := "PayloadTooLarge"
			if ref := lookup(responses, "400", "$ref"); ref != nil && strings.HasSuffix(ref.Value, "/OAuthBadRequest") {
				tooLarge = "OAuthPayloadTooLarge"
			}
			addResponse(responses, "413", "#/components/responses/"+tooLarge)
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return out.Bytes(), nil
}

// takesBody are the methods whose requests carry a body.
var takesBody = map[string]bool{"post": true, "put": true, "patch": true}

// addResponse adds status → {$ref: ref} to responses, keeping the statuses
// in ascending order.
func addResponse(responses *yaml.Node, status, ref string) {
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: status, Style: yaml.SingleQuotedStyle}
	value := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "$ref"},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: ref, Style: yaml.SingleQuotedStyle},
	}}
	at := len(responses.Content)
	for i := 0; i+1 < len(responses.Content); i += 2 {
		if responses.Content[i].Value > status {
			at = i
			break
		}
	}
	responses.Content = append(responses.Content[:at], append([]*yaml.Node{key, value}, responses.Content[at:]...)...)
}
