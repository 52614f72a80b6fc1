package services

import (
	"io"
	"log/slog"
	"net/url"
	"reflect"
	"testing"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/tools"
)

// New fills every service of the set: a handler never finds one missing.
func TestNewBuildsEveryService(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://domaind.test/")
	set := New(Deps{Config: &config.Config{BaseURL: base, SecretKey: []byte("test-secret-key-0123456789abcdef")},
		Redis: platformtest.NewRedis(t).Client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tools: tools.New(tools.Deps{})})
	defer set.Close()
	v := reflect.ValueOf(set).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Errorf("Set.%s is nil", v.Type().Field(i).Name)
		}
	}
	if got := BaseURL(&config.Config{BaseURL: base}); got != "https://domaind.test" {
		t.Errorf("BaseURL = %q, want it without the trailing slash", got)
	}
}
