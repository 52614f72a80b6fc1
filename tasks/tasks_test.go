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
