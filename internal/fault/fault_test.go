package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorsCarryTheirCodeThroughWrapping(t *testing.T) {
	sentinel := New(NotFound, "no such order")
	wrapped := fmt.Errorf("load order o_1: %w", sentinel)
	if !errors.Is(wrapped, sentinel) {
		t.Error("errors.Is lost the sentinel")
	}
	e, ok := As(wrapped)
	if !ok || e.Code != NotFound || e.Message != "no such order" {
		t.Errorf("As = %+v, %v", e, ok)
	}
	v := Invalid("years", "must be %d to %d", 1, 10)
	if v.Code != Validation || v.Field != "years" || v.Message != "years must be 1 to 10" {
		t.Errorf("Invalid = %+v", v)
	}
	cause := errors.New("disk on fire")
	if e := (&Error{Code: Internal, Message: "x", Err: cause}); !errors.Is(e, cause) {
		t.Error("Err is not unwrapped")
	}
	if _, ok := As(errors.New("plain")); ok {
		t.Error("a plain error is not coded")
	}
}

func TestInvalidErrNamesTheFieldAndKeepsTheCause(t *testing.T) {
	cause := errors.New(`"exa mple.com" is not a domain name`)
	e := InvalidErr("domain", cause)
	if e.Code != Validation || e.Field != "domain" || e.Message != cause.Error() || !errors.Is(e, cause) {
		t.Errorf("InvalidErr = %+v", e)
	}
}
