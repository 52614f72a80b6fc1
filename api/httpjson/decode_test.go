package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
)

// Decoding errors say what is wrong as a person would, never in Go's words.
func TestDecodeErrorsSpeakJSON(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	type body struct {
		Items   []item            `json:"items"`
		Tags    []string          `json:"tags"`
		Count   int               `json:"count"`
		Price   float64           `json:"price"`
		On      *bool             `json:"on"`
		Options map[string]string `json:"options"`
		Nested  struct {
			Deep []int `json:"deep"`
		} `json:"nested"`
	}
	for _, tt := range []struct{ in, field, want string }{
		{`{"items":3}`, "items", "items must be an array of objects"},
		{`{"items":[1]}`, "items", "items must be an array of objects"},
		{`{"tags":"a"}`, "tags", "tags must be an array of strings"},
		{`{"count":"x"}`, "count", "count must be an integer"},
		{`{"count":1.5}`, "count", "count must be an integer"},
		{`{"price":"x"}`, "price", "price must be a number"},
		{`{"on":"yes"}`, "on", "on must be true or false"},
		{`{"options":[]}`, "options", "options must be an object"},
		{`{"nested":{"deep":{}}}`, "nested.deep", "nested.deep must be an array of integers"},
		{`[1]`, "", "request body must be an object"},
	} {
		gin.SetMode(gin.ReleaseMode)
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/", strings.NewReader(tt.in))
		c.Request.Header.Set("Content-Type", "application/json")
		var b body
		var e *fault.Error
		if err := DecodeJSON(c, &b, false); !errors.As(err, &e) || e.Message != tt.want || e.Field != tt.field {
			t.Errorf("%s: %+v, want %q on field %q", tt.in, err, tt.want, tt.field)
		}
	}
}

// A body is one JSON value: whatever follows it, even a closing bracket,
// is refused; white space is not.
func TestDecodeRefusesDataAfterTheObject(t *testing.T) {
	type body struct {
		Domain string `json:"domain"`
	}
	decode := func(in string) error {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/", strings.NewReader(in))
		c.Request.Header.Set("Content-Type", "application/json")
		var b body
		return DecodeJSON(c, &b, false)
	}
	for _, in := range []string{`{"domain":"a.com"}}`, `{"domain":"a.com"}]]]`, `{"domain":"a.com"} {}`, `{"domain":"a.com"}x`, `{"domain":"a.com"},`} {
		var e *fault.Error
		if err := decode(in); !errors.As(err, &e) || e.Code != fault.BadRequest || e.Message != "request body has data after the JSON object" {
			t.Errorf("%s: %v, want the trailing data refused", in, err)
		}
	}
	if err := decode("{\"domain\":\"a.com\"}\n \t"); err != nil {
		t.Errorf("a body ending in white space: %v", err)
	}
}

// A NUL escaped in a JSON string is refused (Postgres's text holds none);
// an escaped backslash followed by "u0000" is not one.
func TestDecodeRefusesNUL(t *testing.T) {
	decode := func(in string) (string, error) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/", strings.NewReader(in))
		c.Request.Header.Set("Content-Type", "application/json")
		var b struct {
			Domain string `json:"domain"`
		}
		err := DecodeJSON(c, &b, false)
		return b.Domain, err
	}
	for _, in := range []string{`{"domain":"a\u0000"}`, `{"domain":"\\\u0000"}`, `{"domain":"a","x\u0000":1}`} {
		var e *fault.Error
		if _, err := decode(in); !errors.As(err, &e) || e.Code != fault.Validation || e.Field != "body" {
			t.Errorf("%s: %v, want the NUL refused", in, err)
		}
	}
	if got, err := decode(`{"domain":"a\\u0000"}`); err != nil || got != `a\u0000` {
		t.Errorf("an escaped backslash before u0000 = %q, %v; want it taken", got, err)
	}
}

// A name given twice in one object is refused, at any depth, also in
// another case (decoding fills a field from either): decoding keeps the
// last, another reader may take the first. The same name in two objects,
// or a value that spells a name, is not a repeat.
func TestDecodeRefusesANameGivenTwice(t *testing.T) {
	type op struct {
		Op     string         `json:"op"`
		Params map[string]any `json:"params"`
	}
	decode := func(in string) error {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/", strings.NewReader(in))
		c.Request.Header.Set("Content-Type", "application/json")
		var b struct {
			Q   string `json:"q"`
			Ops []op   `json:"ops"`
			Tag string `json:"tag"`
		}
		return DecodeJSON(c, &b, false)
	}
	for in, name := range map[string]string{
		`{"q":"a.com","q":"b.com"}`:                           "q",
		`{"ops":[{"op":"x"},{"op":"y","op":"z"}]}`:            "op",
		`{"ops":[{"params":{"tld":"com","tld":"net"}}]}`:      "tld",
		`{"ops":[{"params":{"a":[1,{"b":2}],"a":3}}],"q":""}`: "a",
		`{"q":"a.com","Q":"b.com"}`:                           "Q",   // both fill Q
		`{"q":"a.com","\u0071":"b.com"}`:                      "q",   // the same name, escaped
		`{"ops":[{"params":{"tld":"com","TLD":"net"}}]}`:      "TLD", // read into a field later
	} {
		var e *fault.Error
		if err := decode(in); !errors.As(err, &e) || e.Code != fault.Validation || !strings.Contains(e.Message, `"`+name+`" is given twice`) {
			t.Errorf("%s: %v, want %q refused as given twice", in, err, name)
		}
	}
	for _, in := range []string{
		`{"q":"q","tag":"tag"}`,
		`{"ops":[{"op":"x","params":{"op":"op"}},{"op":"y","params":{"q":["q","q"]}}],"q":"a"}`,
		`{"ops":[{"params":{"a":{"a":{"a":1}}}}],"tag":"a"}`,
	} {
		if err := decode(in); err != nil {
			t.Errorf("%s: %v, want it taken", in, err)
		}
	}
}

// FuzzRepeatedName holds repeatedName's one pass over the bytes to a walk
// of the decoder's tokens, on any valid JSON: both find a repeat, the
// same one, or neither does.
func FuzzRepeatedName(f *testing.F) {
	for _, seed := range []string{
		`{"q":"a","Q":"b"}`, `{"a":{"b":1,"B":2}}`, `[{"a":1},{"a":2}]`, `{"a":[{"a":1}],"b":"a"}`,
		`{"\u0071":1,"q":2}`, `{"\"":1,"\\\"":2}`, `{"k":1,"\u212a":2}`, `{"ſ":1,"S":2}`, `{"é":1,"É":2}`,
		`{ "a" : [ "x" , { "y" : null } ] , "b" : true , "c" : -1.5e3 }`, `"just a string"`, `42`, `{}`, `[]`,
		`{"a":"}","b":"]","c":",","d":"{\"a\":1,\"a\":2}"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		name, found := repeatedName(body)
		wantName, want := repeatedByTokens(body)
		if found != want || name != wantName {
			t.Errorf("%q: repeatedName = %q, %v; the decoder's tokens say %q, %v", body, name, found, wantName, want)
		}
	})
}

// repeatedByTokens is repeatedName written over the decoder's tokens:
// slower, and plainly right.
func repeatedByTokens(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type level struct {
		names      map[string]bool // nil for an array
		expectName bool
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if top >= 0 && stack[top].names != nil {
					stack[top].expectName = true
				}
				l := level{}
				if t == '{' {
					l = level{names: map[string]bool{}, expectName: true}
				}
				stack = append(stack, l)
				continue
			}
			stack = stack[:top]
			if top > 0 && stack[top-1].names != nil {
				stack[top-1].expectName = true
			}
		case string:
			if top >= 0 && stack[top].names != nil {
				if stack[top].expectName {
					folded := strings.ToUpper(strings.ToLower(t))
					if stack[top].names[folded] {
						return t, true
					}
					stack[top].names[folded] = true
				}
				stack[top].expectName = !stack[top].expectName
			}
		default:
			if top >= 0 && stack[top].names != nil {
				stack[top].expectName = true
			}
		}
	}
}
