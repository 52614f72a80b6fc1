package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// decodeJSON reads the request body into v, refusing another content type,
// unknown fields, trailing data and wrong types with a 400 that says what is
// wrong (the spec's invalid-input status; a 415 is not among its answers).
// An empty body decodes as {} when emptyOK.
func decodeJSON(c *gin.Context, v any, emptyOK bool) error {
	if err := requireJSON(c); err != nil {
		return err
	}
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.Is(err, io.EOF) && emptyOK:
		return nil
	case errors.Is(err, io.EOF):
		return Errorf(http.StatusBadRequest, "bad_request", "request body is empty; send a JSON object")
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &syn):
		return Errorf(http.StatusBadRequest, "bad_request", "request body is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		return Errorf(http.StatusBadRequest, "validation_error", "field %q must be %s", typ.Field, typ.Type.String())
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		return Errorf(http.StatusBadRequest, "validation_error", "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case err != nil:
		return Errorf(http.StatusBadRequest, "bad_request", "request body is not valid JSON")
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, "bad_request", "request body has data after the JSON object")
	}
	return nil
}

// requireJSON refuses a body sent as another media type than JSON, or
// without a Content-Type (RFC 9110 media types compare without case, so
// "Application/JSON; charset=UTF-8" is JSON). A request without a body
// needs no Content-Type. Saying "JSON" is what a cross-site form cannot do
// without the browser asking the site first (CORS), so endpoints that act
// on a cookie or a Basic login are not reachable by forged forms.
func requireJSON(c *gin.Context) error {
	ct := c.GetHeader("Content-Type")
	if ct == "" {
		if bodyEmpty(c.Request) {
			return nil
		}
		return Errorf(http.StatusBadRequest, "bad_request", "Content-Type is missing; send the body as application/json")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return Errorf(http.StatusBadRequest, "bad_request", "Content-Type %q is not accepted; send the body as application/json", ct)
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
