package tasks

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// Every payload type of the package's source is in Payloads, once, and
// every one has a Spec, as every Spec has a payload.
func TestEveryPayloadHasASpec(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["tasks"].Files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "TaskType" && fn.Recv != nil {
				declared = append(declared, fn.Recv.List[0].Type.(*ast.Ident).Name)
			}
		}
	}
	var listed, types []string
	for _, p := range Payloads {
		listed = append(listed, reflect.TypeOf(p).Name())
		types = append(types, p.TaskType())
	}
	slices.Sort(declared)
	slices.Sort(listed)
	slices.Sort(types)
	if !slices.Equal(declared, listed) {
		t.Errorf("payload types declared %v, listed in Payloads %v", declared, listed)
	}
	if specs := slices.Sorted(maps.Keys(Specs)); !slices.Equal(specs, slices.Compact(slices.Clone(types))) || len(types) != len(specs) {
		t.Errorf("task types of the payloads %v, of Specs %v: want each once in both", types, specs)
	}
}

// Every payload encodes, and decodes into itself; a payload that does not
// decode is never retried, and an empty one is the zero value.
func TestEveryPayloadEncodes(t *testing.T) {
	for _, p := range Payloads {
		task := New(p)
		if task.Type() != p.TaskType() || len(task.Payload()) == 0 {
			t.Errorf("New(%T) = %s %q", p, task.Type(), task.Payload())
		}
	}
	want := TransferPushPayload{OrderID: "ord_1", Push: 7, Recipient: "registrar"}
	if got, err := Decode[TransferPushPayload](New(want)); err != nil || got != want {
		t.Errorf("round trip = %+v, %v; want %+v", got, err, want)
	}
	if _, err := Decode[TransferPushPayload](asynq.NewTask(TypeTransferPush, []byte(`{"push":"seven"}`))); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("a payload that does not decode = %v, want SkipRetry", err)
	}
	if got, err := Decode[SettlementSchedulePayload](asynq.NewTask(TypeSettlementSchedule, nil)); err != nil || got != (SettlementSchedulePayload{}) {
		t.Errorf("an empty payload = %+v, %v", got, err)
	}
}

// SpecOf and Options refuse a type without a Spec.
func TestATypeWithoutASpecPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("SpecOf of an unknown type did not panic")
		}
	}()
	SpecOf("no:such")
}

// A Spec's retries wait as its Schedule, jittered, or its Backoff, doubled,
// say; its Lifetime adds every attempt's Timeout and every retry's longest
// wait, and is unknown when asynq's default decides the waits.
func TestSpecDelaysAndLifetime(t *testing.T) {
	scheduled := Spec{MaxRetry: 3, Timeout: 10 * time.Second, Schedule: []time.Duration{time.Minute, time.Hour}}
	backoff := Spec{MaxRetry: 3, Timeout: time.Minute, Backoff: 5 * time.Second}
	tests := []struct {
		name   string
		spec   Spec
		n      int
		jitter float64
		want   time.Duration
	}{
		{"first step", scheduled, 0, 0, time.Minute},
		{"second step, stretched", scheduled, 1, Jitter, time.Hour + 6*time.Minute},
		{"past the schedule, the last step shortened", scheduled, 2, -Jitter, time.Hour - 6*time.Minute},
		{"first backoff", backoff, 0, Jitter, 5 * time.Second},
		{"third backoff", backoff, 2, 0, 20 * time.Second},
		{"backoff doubled ten times at most", backoff, 14, 0, 5 * time.Second << 10},
	}
	for _, tc := range tests {
		if got, ok := tc.spec.Delay(tc.n, tc.jitter); !ok || got != tc.want {
			t.Errorf("%s: Delay = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
	lifetimes := []struct {
		name string
		spec Spec
		want time.Duration
	}{
		{"scheduled", scheduled, 4*10*time.Second + 66*time.Second + 2*66*time.Minute},
		{"backoff", backoff, 4*time.Minute + 35*time.Second},
		{"no retries", Spec{Timeout: time.Minute}, time.Minute},
	}
	for _, tc := range lifetimes {
		if got, ok := tc.spec.Lifetime(); !ok || got != tc.want {
			t.Errorf("%s: Lifetime = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
	if d, ok := (Spec{MaxRetry: 3, Timeout: time.Minute}).Lifetime(); ok {
		t.Errorf("a Spec on asynq's default delays has Lifetime %v, want none", d)
	}
}
