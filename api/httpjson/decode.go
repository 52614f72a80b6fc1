package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
)

// DecodeJSON reads the request body into v, refusing another content type,
// unknown fields, a name given twice in one object, trailing data and
// wrong types with a 400 that says what is wrong (the spec's invalid-input
// status; a 415 is not among its answers). An empty body decodes as {}
// when emptyOK.
func DecodeJSON(c *gin.Context, v any, emptyOK bool) error {
	if err := RequireJSON(c); err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request.Body) // within the route's body limit
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case err != nil:
		return fault.New(fault.BadRequest, "request body could not be read: %v", err)
	case hasNULEscape(body):
		// Postgres's text and jsonb hold no NUL: stored or looked up,
		// it would fail the query.
		return fault.Invalid("body", "must not hold NUL characters (\\u0000)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF) && emptyOK:
		return nil
	case errors.Is(err, io.EOF):
		return fault.New(fault.BadRequest, "request body is empty; send a JSON object")
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &syn):
		return fault.New(fault.BadRequest, "request body is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return fault.New(fault.BadRequest, "request body must be %s", describeType(typ.Type))
	case errors.As(err, &typ):
		want := typ.Type
		if declared := fieldType(reflect.TypeOf(v), typ.Field); declared != nil {
			want = declared // "an array of objects", not the element's "an object"
		}
		return &fault.Error{Code: fault.Validation, Field: typ.Field, Message: fmt.Sprintf("%s must be %s", typ.Field, describeType(want))}
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		return fault.New(fault.Validation, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case err != nil:
		return fault.New(fault.BadRequest, "request body is not valid JSON")
	}
	// Anything but the end after the value is refused, a closing bracket
	// too (which Decoder.More takes for the end of an array).
	switch _, err := dec.Token(); {
	case errors.As(err, &mbe):
		return err
	case !errors.Is(err, io.EOF):
		return fault.New(fault.BadRequest, "request body has data after the JSON object")
	}
	if name, ok := repeatedName(body); ok {
		return fault.New(fault.Validation, "%q is given twice in one object; give it once", name)
	}
	return nil
}

// repeatedName finds a name given twice in one object of body, valid JSON:
// decoding keeps the last, and another reader of the same bytes may take
// the first, so a request is read one way only. Names are compared as
// decoding matches them to a struct's fields, without case: "q" and "Q"
// fill the same field. The scan knows no types, so in a free-form object
// (a batch's params, a bulk op's contacts) names that differ in case only
// are refused too. One pass over the bytes: strings are skipped whole, and
// only names are decoded.
func repeatedName(body []byte) (string, bool) {
	var (
		// Each open object's names so far, folded; nil for an array.
		open []map[string]bool
		// expectName says the next string is a name of the innermost
		// object, not a value.
		expectName bool
		key        []byte
	)
	for i := 0; i < len(body); {
		switch body[i] {
		case '{':
			open = append(open, map[string]bool{})
			expectName = true
		case '[':
			open = append(open, nil)
			expectName = false
		case '}', ']':
			open = open[:len(open)-1]
			expectName = false
		case ',':
			expectName = open[len(open)-1] != nil
		case '"':
			end := stringEnd(body, i)
			if expectName {
				key = foldName(key[:0], body[i:end])
				names := open[len(open)-1]
				if names[string(key)] {
					return nameOf(body[i:end]), true
				}
				names[string(key)] = true
				expectName = false
			}
			i = end
			continue
		}
		i++ // a value's byte, a colon or a space: none of them ends a name
	}
	return "", false
}

// stringEnd is the index just past the JSON string that starts at
// body[i], its opening quote.
func stringEnd(body []byte, i int) int {
	for j := i + 1; j < len(body); j++ {
		switch body[j] {
		case '\\':
			j++ // the escaped byte
		case '"':
			return j + 1
		}
	}
	return len(body)
}

// nameOf decodes quoted, a JSON string (a byte that is not UTF-8 read as
// U+FFFD, as the decoder reads it).
func nameOf(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	json.Unmarshal(quoted, &s) // valid: the body decoded
	return s
}

// foldName appends name (quoted, a JSON string) to dst folded as
// encoding/json folds names to match fields: each character lowered,
// then raised.
func foldName(dst, quoted []byte) []byte {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(nameOf(quoted))
	} // else a byte that is not UTF-8 is decoded below as U+FFFD
	for len(raw) > 0 {
		if c := raw[0]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst, raw = append(dst, c), raw[1:]
			continue
		}
		r, n := utf8.DecodeRune(raw)
		dst, raw = utf8.AppendRune(dst, unicode.ToUpper(unicode.ToLower(r))), raw[n:]
	}
	return dst
}

// hasNULEscape says body has a \u0000 escape: one whose backslash is not
// itself escaped. (A NUL byte in a JSON string is a syntax error.)
func hasNULEscape(body []byte) bool {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		j += i
		slashes := 0
		for k := j - 1; k >= 0 && body[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		i = j + 1
	}
}

// fieldType is the declared type of the field at path (JSON names joined
// by dots) in t, or nil when the path does not lead to one.
func fieldType(t reflect.Type, path string) reflect.Type {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		var found reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == name || (tag == "" && strings.EqualFold(f.Name, name)) {
				found = f.Type
				break
			}
		}
		if found == nil {
			return nil
		}
		t = found
	}
	return t
}

// describeType says what JSON a Go type reads, as a person would ("an
// array of objects"), not as Go names it ("[]api.batchOperation").
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return describeType(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		of := describeType(t.Elem())
		of = strings.TrimPrefix(strings.TrimPrefix(of, "an "), "a ")
		switch of {
		case "true or false":
			return "an array of booleans"
		case "value":
			return "an array"
		}
		return "an array of " + of + "s"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value"
}

// RequireJSON refuses a body sent as another media type than JSON, or
// without a Content-Type (RFC 9110 media types compare without case, so
// "Application/JSON; charset=UTF-8" is JSON). A request without a body
// needs no Content-Type. Saying "JSON" is what a cross-site form cannot do
// without the browser asking the site first (CORS), so endpoints that act
// on a cookie or a Basic login are not reachable by forged forms.
func RequireJSON(c *gin.Context) error {
	ct := c.GetHeader("Content-Type")
	if ct == "" {
		if bodyEmpty(c.Request) {
			return nil
		}
		return fault.New(fault.BadRequest, "Content-Type is missing; send the body as application/json")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return fault.New(fault.BadRequest, "Content-Type %q is not accepted; send the body as application/json", ct)
	}
	return nil
}

// bodyEmpty reports whether r has no body, reading ahead one byte when the
// length is not declared (and putting it back).
func bodyEmpty(r *http.Request) bool {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return true
	case r.ContentLength > 0:
		return false
	}
	var one [1]byte
	n, _ := io.ReadFull(r.Body, one[:])
	if n == 0 {
		return true
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(one[:n]), r.Body), r.Body}
	return false
}
