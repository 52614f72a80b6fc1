package lookup

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/models/modelstest"
)

func TestRefreshBootstrapKeepsOnlyNewerFiles(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
	defer srv.Close()

	stored, err := StoredBootstrap(ctx, db)
	if err != nil || !stored.Publication().Equal(rdap.DefaultBootstrap().Publication()) {
		t.Fatalf("with nothing stored: %v %v", stored.Publication(), err)
	}
	client := rdap.New(srv.Client(), stored, 0, nil)

	body = `{"version":"1.0","publication":"2020-01-01T00:00:00Z","services":[[["old"],["https://rdap.old.example/"]]]}`
	if switched, err := RefreshBootstrap(ctx, db, srv.Client(), srv.URL, client); err != nil || switched {
		t.Errorf("older file: switched %v, %v", switched, err)
	}
	body = `{"version":"1.0","publication":"2030-01-01T00:00:00Z","services":[[["com"],["https://rdap.new.example/com/"]]]}`
	if switched, err := RefreshBootstrap(ctx, db, srv.Client(), srv.URL, client); err != nil || !switched {
		t.Fatalf("newer file: switched %v, %v", switched, err)
	}
	if u, err := client.Server("x.com"); err != nil || u.String() != "https://rdap.new.example/com/" {
		t.Errorf("client asks %v, %v", u, err)
	}
	again, err := StoredBootstrap(ctx, db)
	if err != nil || !again.Publication().Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a new worker starts on %v, %v; want the stored 2030 file", again.Publication(), err)
	}
	body = `not json`
	if _, err := RefreshBootstrap(ctx, db, srv.Client(), srv.URL, client); err == nil {
		t.Error("a broken file was accepted")
	}
	if u, _ := client.Server("x.com"); u.String() != "https://rdap.new.example/com/" {
		t.Errorf("a failed refresh changed the bootstrap to %v", u)
	}
}
