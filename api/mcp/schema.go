package mcp

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// bound narrows one property of a tool's input schema to what the tool
// takes: the schema a client reads is the rule the tool applies, and the
// SDK refuses input outside it before the tool runs.
type bound struct {
	enum     []string
	min, max float64 // a range when max > 0
	maxItems int
}

// inputSchema is In's schema as the SDK infers it, narrowed by bounds
// (by JSON property name).
func inputSchema[In any](bounds map[string]bound) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: the input schema of %T: %v", *new(In), err)) // a type's schema is fixed at build
	}
	for name, b := range bounds {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("mcp: %T has no property %s", *new(In), name))
		}
		for _, v := range b.enum {
			p.Enum = append(p.Enum, v)
		}
		if b.max > 0 {
			p.Minimum, p.Maximum = &b.min, &b.max
		}
		if b.maxItems > 0 {
			p.MaxItems = &b.maxItems
		}
	}
	return s
}
