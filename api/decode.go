package api

import (
	"encoding/json"
	"errors"
	"io"
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

// requireJSON refuses a body sent as another content type than JSON (a
// missing Content-Type is taken as JSON).
func requireJSON(c *gin.Context) error {
	if ct := c.ContentType(); ct != "" && ct != "application/json" {
		return Errorf(http.StatusBadRequest, "bad_request", "Content-Type %q is not accepted; send the body as application/json", ct)
	}
	return nil
}
