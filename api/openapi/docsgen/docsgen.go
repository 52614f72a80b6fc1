// Package docsgen renders the OpenAPI document as the HTML reference page
// served at /docs. It runs at generate time (go generate ./api/openapi),
// so that the service's binary carries the page rather than the OpenAPI
// library that reads the document.
package docsgen

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

//go:embed docs.html
var assets embed.FS

// docsTemplate renders the reference page from a docsPage.
var docsTemplate = template.Must(template.New("docs.html").Funcs(template.FuncMap{
	"lower": strings.ToLower,
}).ParseFS(assets, "docs.html"))

// docsPage is what the reference page shows: the document's operations
// grouped by tag, then its schemas and security schemes.
type docsPage struct {
	Title, Version, Summary, OpenAPI string
	Description                      template.HTML
	ServerURL                        string
	// Common are the headers every response carries, shown once.
	Common   []docsParam
	Tags     []docsTag
	Security []docsScheme
	Schemas  []docsSchema
}

type docsTag struct {
	Name, ID    string
	Description template.HTML
	Operations  []docsOperation
}

type docsOperation struct {
	ID, Method, Path, Summary string
	Description               template.HTML
	Security                  template.HTML
	Params                    []docsParam
	Body                      *docsBody
	Responses                 []docsResponse
}

type docsParam struct {
	Name, In    string
	Required    bool
	Type        template.HTML
	Description template.HTML
}

type docsBody struct {
	Required    bool
	Description template.HTML
	Media       []docsMedia
}

type docsMedia struct {
	Type    string
	Schema  template.HTML
	Fields  []docsField
	Example string
}

type docsResponse struct {
	Status      string
	Class       string // "ok", "redirect" or "error", for its colour
	Description template.HTML
	Headers     []docsParam
	Media       []docsMedia
}

type docsSchema struct {
	Name, ID    string
	Description template.HTML
	Type        template.HTML
	Fields      []docsField
}

// docsField is one property of an object schema; nested inline objects
// and arrays of them are flattened into dotted names (error.code, items[].id).
type docsField struct {
	Name        string
	Required    bool
	Type        template.HTML
	Description template.HTML
}

type docsScheme struct {
	Name, Kind  string
	Description template.HTML
	Details     []string
}

// Render renders the reference page of the document doc (YAML).
func Render(doc []byte) ([]byte, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi: build model: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	page := buildPage(&m.Model, &root)
	var out bytes.Buffer
	if err := docsTemplate.Execute(&out, page); err != nil {
		return nil, fmt.Errorf("openapi: render the reference: %w", err)
	}
	return out.Bytes(), nil
}

func buildPage(m *v3.Document, root *yaml.Node) docsPage {
	p := docsPage{
		Title: m.Info.Title, Version: m.Info.Version, Summary: m.Info.Summary, OpenAPI: m.Version,
		Description: markdown(m.Info.Description),
	}
	if len(m.Servers) > 0 {
		p.ServerURL = m.Servers[0].URL
	}
	ops := map[string][]docsOperation{}
	var order []string
	for _, t := range m.Tags {
		order = append(order, t.Name)
		p.Tags = append(p.Tags, docsTag{Name: t.Name, ID: "tag-" + slug(t.Name), Description: markdown(t.Description)})
	}
	common := commonHeaders(m)
	for name, h := range common {
		p.Common = append(p.Common, docsParam{Name: name, Required: true, Type: typeOf(h.Schema), Description: markdown(h.Description)})
	}
	slices.SortFunc(p.Common, func(a, b docsParam) int { return strings.Compare(a.Name, b.Name) })
	add := func(at []string, shown, method string, op *v3.Operation) {
		tag := "Other"
		if len(op.Tags) > 0 {
			tag = op.Tags[0]
		}
		if !slices.Contains(order, tag) {
			order = append(order, tag)
			p.Tags = append(p.Tags, docsTag{Name: tag, ID: "tag-" + slug(tag)})
		}
		ops[tag] = append(ops[tag], buildOperation(at, shown, method, op, root, common))
	}
	for path, item := range m.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			add([]string{"paths", path, method}, path, method, op)
		}
	}
	// Webhooks are requests the service sends: shown as sent to the
	// receiver's endpoint.
	for name, item := range m.Webhooks.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			add([]string{"webhooks", name, method}, "{your webhook endpoint}", method, op)
		}
	}
	for i := range p.Tags {
		p.Tags[i].Operations = ops[p.Tags[i].Name]
	}
	if c := m.Components; c != nil {
		for name, s := range c.SecuritySchemes.FromOldest() {
			p.Security = append(p.Security, buildScheme(name, s))
		}
		for name, sp := range c.Schemas.FromOldest() {
			s := sp.Schema()
			ds := docsSchema{Name: name, ID: schemaID(name), Type: typeOf(sp)}
			if s != nil {
				ds.Description = markdown(s.Description)
				ds.Type = typeOfSchema(s)
				ds.Fields = fields(s, "")
			}
			p.Schemas = append(p.Schemas, ds)
		}
	}
	return p
}

// buildOperation builds the operation op, found in the document at the
// keys at (its path or webhook, then method) and shown as sent to shown.
func buildOperation(at []string, shown, method string, op *v3.Operation, root *yaml.Node, common map[string]*v3.Header) docsOperation {
	o := docsOperation{
		ID: "op-" + op.OperationId, Method: strings.ToUpper(method), Path: shown, Summary: op.Summary,
		Description: markdown(op.Description), Security: security(op.Security),
	}
	if o.ID == "op-" {
		o.ID = "op-" + slug(method+" "+shown)
	}
	for _, prm := range op.Parameters {
		o.Params = append(o.Params, docsParam{
			Name: prm.Name, In: prm.In, Required: prm.Required != nil && *prm.Required,
			Type: typeOf(prm.Schema), Description: markdown(prm.Description),
		})
	}
	if rb := op.RequestBody; rb != nil {
		o.Body = &docsBody{Required: rb.Required != nil && *rb.Required, Description: markdown(rb.Description), Media: media(rb.Content)}
	}
	if op.Responses != nil {
		for code, r := range op.Responses.Codes.FromOldest() {
			desc := r.Description
			// A $ref's sibling description overrides the component's (OpenAPI 3.1 §4.8.23).
			if n := lookup(root, append(at, "responses", code)...); n != nil && lookup(n, "$ref") != nil {
				if d := lookup(n, "description"); d != nil {
					desc = d.Value
				}
			}
			// A response's description is its summary line: one paragraph, inline.
			resp := docsResponse{Status: code, Class: statusClass(code), Description: template.HTML(inline(strings.Join(strings.Fields(desc), " "))), Media: media(r.Content)}
			for name, h := range r.Headers.FromOldest() {
				if _, ok := common[name]; ok {
					continue
				}
				resp.Headers = append(resp.Headers, docsParam{Name: name, Required: h.Required, Type: typeOf(h.Schema), Description: markdown(h.Description)})
			}
			o.Responses = append(o.Responses, resp)
		}
	}
	return o
}

// commonHeaders are the headers that every response of every operation
// documents as required.
func commonHeaders(m *v3.Document) map[string]*v3.Header {
	var common map[string]*v3.Header
	for _, item := range m.Paths.PathItems.FromOldest() {
		for _, op := range item.GetOperations().FromOldest() {
			if op.Responses == nil {
				continue
			}
			for _, r := range op.Responses.Codes.FromOldest() {
				here := map[string]*v3.Header{}
				for name, h := range r.Headers.FromOldest() {
					if h.Required {
						here[name] = h
					}
				}
				if common == nil {
					common = here
					continue
				}
				for name := range common {
					if _, ok := here[name]; !ok {
						delete(common, name)
					}
				}
			}
		}
	}
	return common
}

func statusClass(code string) string {
	switch {
	case strings.HasPrefix(code, "2"):
		return "ok"
	case strings.HasPrefix(code, "3"):
		return "redirect"
	}
	return "error"
}

func media(content *orderedmap.Map[string, *v3.MediaType]) []docsMedia {
	var out []docsMedia
	for mt, m := range content.FromOldest() {
		dm := docsMedia{Type: mt, Schema: typeOf(m.Schema)}
		if m.Schema != nil && !m.Schema.IsReference() {
			if s := m.Schema.Schema(); s != nil {
				dm.Fields = fields(s, "")
			}
		}
		ex := m.Example
		if ex == nil && m.Examples != nil {
			for _, e := range m.Examples.FromOldest() {
				ex = e.Value
				break
			}
		}
		if strings.HasSuffix(mt, "ndjson") && ex != nil && ex.Kind == yaml.SequenceNode {
			dm.Example = ndjsonExample(ex)
		} else {
			dm.Example = exampleJSON(ex)
		}
		out = append(out, dm)
	}
	return out
}

// ndjsonExample shows a stream's example (an array of events) as it is
// sent: one compact JSON value per line.
func ndjsonExample(n *yaml.Node) string {
	var lines []string
	for _, c := range n.Content {
		b, err := NodeJSON(c)
		if err != nil {
			return ""
		}
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

// exampleJSON is an example as indented JSON.
func exampleJSON(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	compact, err := NodeJSON(n)
	if err != nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return string(compact)
	}
	return b.String()
}

// security describes an operation's security requirements: alternatives
// joined by "or", schemes of one alternative by "and".
func security(reqs []*base.SecurityRequirement) template.HTML {
	if len(reqs) == 0 {
		return "none"
	}
	var alts []string
	for _, r := range reqs {
		if r.ContainsEmptyRequirement || orderedmap.Len(r.Requirements) == 0 {
			alts = append(alts, "none")
			continue
		}
		var all []string
		for name, scopes := range r.Requirements.FromOldest() {
			s := `<a href="#security-` + template.HTMLEscapeString(name) + `">` + template.HTMLEscapeString(name) + `</a>`
			if len(scopes) > 0 {
				s += " (" + template.HTMLEscapeString(strings.Join(scopes, ", ")) + ")"
			}
			all = append(all, s)
		}
		alts = append(alts, strings.Join(all, " and "))
	}
	return template.HTML(strings.Join(alts, " or "))
}

func buildScheme(name string, s *v3.SecurityScheme) docsScheme {
	ds := docsScheme{Name: name, Kind: s.Type, Description: markdown(s.Description)}
	switch s.Type {
	case "apiKey":
		ds.Details = append(ds.Details, fmt.Sprintf("%s %s", s.In, s.Name))
	case "http":
		ds.Details = append(ds.Details, "HTTP "+s.Scheme)
	case "oauth2":
		if f := s.Flows; f != nil && f.AuthorizationCode != nil {
			ac := f.AuthorizationCode
			ds.Details = append(ds.Details, "authorization code: "+ac.AuthorizationUrl, "token: "+ac.TokenUrl)
			for scope, what := range ac.Scopes.FromOldest() {
				ds.Details = append(ds.Details, "scope "+scope+": "+what)
			}
		}
	}
	return ds
}

// fields flattens an object schema's properties, nested inline objects
// and arrays of them under prefix.
func fields(s *base.Schema, prefix string) []docsField {
	var out []docsField
	for name, sp := range s.Properties.FromOldest() {
		f := docsField{Name: prefix + name, Required: slices.Contains(s.Required, name), Type: typeOf(sp)}
		if sub := sp.Schema(); sub != nil && !sp.IsReference() {
			f.Description = markdown(sub.Description)
			out = append(out, f)
			switch {
			case sub.Properties != nil:
				out = append(out, fields(sub, f.Name+".")...)
			case sub.Items != nil && sub.Items.IsA() && !sub.Items.A.IsReference():
				if is := sub.Items.A.Schema(); is != nil && is.Properties != nil {
					out = append(out, fields(is, f.Name+"[].")...)
				}
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// typeOf is a schema's type in a few words, with links to named schemas.
func typeOf(sp *base.SchemaProxy) template.HTML {
	if sp == nil {
		return ""
	}
	if sp.IsReference() {
		name := strings.TrimPrefix(sp.GetReference(), "#/components/schemas/")
		return template.HTML(`<a href="#` + schemaID(name) + `">` + template.HTMLEscapeString(name) + `</a>`)
	}
	s := sp.Schema()
	if s == nil {
		return "any"
	}
	return typeOfSchema(s)
}

func typeOfSchema(s *base.Schema) template.HTML {
	var alts []*base.SchemaProxy
	sep := " | "
	switch {
	case len(s.OneOf) > 0:
		alts = s.OneOf
	case len(s.AnyOf) > 0:
		alts, sep = s.AnyOf, " or "
	case len(s.AllOf) > 0:
		alts, sep = s.AllOf, " and "
	}
	if alts != nil {
		parts := make([]string, len(alts))
		for i, a := range alts {
			parts[i] = string(typeOf(a))
		}
		return template.HTML(strings.Join(parts, sep))
	}
	if s.Const != nil {
		return template.HTML("<code>" + template.HTMLEscapeString(exampleJSON(s.Const)) + "</code>")
	}
	types := s.Type
	if len(types) == 0 {
		if s.Properties != nil {
			types = []string{"object"}
		} else {
			return "any"
		}
	}
	parts := make([]string, 0, len(types))
	for _, t := range types {
		part := template.HTMLEscapeString(t)
		switch {
		case t == "array" && s.Items != nil && s.Items.IsA():
			part = "array of " + string(typeOf(s.Items.A))
		case t == "string" && s.Format != "":
			part += " (" + template.HTMLEscapeString(s.Format) + ")"
		}
		parts = append(parts, part)
	}
	out := strings.Join(parts, " | ")
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = "<code>" + template.HTMLEscapeString(e.Value) + "</code>"
		}
		out += ", one of " + strings.Join(vals, ", ")
	}
	if r := bounds(s); r != "" {
		out += ", " + template.HTMLEscapeString(r)
	}
	if s.Default != nil {
		out += ", default <code>" + template.HTMLEscapeString(exampleJSON(s.Default)) + "</code>"
	}
	return template.HTML(out)
}

// bounds describes a schema's numeric, length and size limits.
func bounds(s *base.Schema) string {
	var r []string
	num := func(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.0f", f), ".0") }
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		r = append(r, num(*s.Minimum)+" to "+num(*s.Maximum))
	case s.Minimum != nil:
		r = append(r, "≥ "+num(*s.Minimum))
	case s.Maximum != nil:
		r = append(r, "≤ "+num(*s.Maximum))
	}
	switch {
	case s.MinLength != nil && s.MaxLength != nil:
		r = append(r, fmt.Sprintf("%d to %d characters", *s.MinLength, *s.MaxLength))
	case s.MaxLength != nil:
		r = append(r, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	switch {
	case s.MinItems != nil && s.MaxItems != nil:
		r = append(r, fmt.Sprintf("%d to %d items", *s.MinItems, *s.MaxItems))
	case s.MaxItems != nil:
		r = append(r, fmt.Sprintf("at most %d items", *s.MaxItems))
	}
	if s.Pattern != "" {
		r = append(r, "pattern "+s.Pattern)
	}
	return strings.Join(r, ", ")
}

func schemaID(name string) string { return "schema-" + name }

// slug makes an HTML id from a name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// lookup walks mapping keys from n; nil when one is missing.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// JSON converts the document doc (YAML) to JSON, keeping the order of
// mapping keys.
func JSON(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return NodeJSON(&root)
}

// NodeJSON converts a YAML tree to JSON, keeping the order of mapping keys.
func NodeJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return err
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.Write(out)
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}
	return nil
}

// scalarValue is a YAML scalar as the JSON value it stands for.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		return strconv.ParseBool(strings.ToLower(n.Value))
	case "!!int":
		v, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	case "!!float":
		v, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return n.Value, nil
}
