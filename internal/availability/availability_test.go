package availability

import (
	"errors"
	"fmt"
	"testing"

	"github.com/domaind/domaind/internal/registry"
)

func TestResult(t *testing.T) {
	tests := []struct {
		name string
		a    registry.Availability
		err  error
		want string
	}{
		{"available", registry.Availability{Available: true, Cents: 1099}, nil, Available},
		{"premium", registry.Availability{Available: true, Premium: true, Cents: 250000}, nil, Premium},
		{"registered", registry.Availability{Reason: registry.ReasonRegistered}, nil, Registered},
		{"reserved", registry.Availability{Reason: registry.ReasonReserved}, nil, Reserved},
		{"registry wording for reserved", registry.Availability{Reason: "reserved by registry policy"}, nil, Reserved},
		{"unrecognised reason counts as taken", registry.Availability{Reason: "domain exists"}, nil, Registered},
		{"not sold", registry.Availability{Reason: registry.ReasonNotSold}, nil, Unsupported},
		{"unknown TLD", registry.Availability{}, fmt.Errorf("x: %w", registry.ErrUnknownTLD), Unsupported},
		{"failure is unknown, never available", registry.Availability{Available: true}, errors.New("timeout"), Unknown},
	}
	for _, tc := range tests {
		if got := result(tc.a, tc.err); got.State != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, got.State, tc.want)
		}
	}
}
