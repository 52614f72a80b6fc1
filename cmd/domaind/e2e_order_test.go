package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// TestEndToEndAPIKilledMidOrder kills the api process (SIGKILL) while its
// order transaction has written the order row, its step and the sale of the
// listing but not yet the order.recorded event: the test holds the events
// table locked, so the transaction waits there. Afterwards there is neither
// the order nor its event, the name is still for sale, and a retry on a new
// api records the order with exactly one event.
func TestEndToEndAPIKilledMidOrder(t *testing.T) {
	c := newCluster(t)
	c.run("migrate")
	ctx := context.Background()
	partners := partner.New(c.db, []byte("e2e-secret-key-0123456789abcdef0123456789"), time.Now)
	p, err := partners.Create(ctx, "Killed Mid-Order Ltd", "ops@killed.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partners.Approve(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	cred, err := partners.IssueCredential(ctx, p.ID, models.EnvSandbox, []string{"buy"})
	if err != nil {
		t.Fatal(err)
	}
	const domain = "killed-mid-order.com"
	price := int64(12_000)
	if err := c.db.Create(&models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: "com", BINCents: &price,
		Currency: "USD", CreatedAt: time.Now()}).Error; err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"domain":"` + domain + `","expected_price":12000,"currency":"USD","external_payment_ref":"ch_killed",
		"buyer":{"email":"buyer@example.com","name":"Ada Buyer","country":"NL"}}`)

	api := c.start("api")
	lock := c.db.Begin()
	defer lock.Rollback()
	if err := lock.Exec("LOCK TABLE events IN ACCESS EXCLUSIVE MODE").Error; err != nil {
		t.Fatal(err)
	}
	client := partnerclient.New("http://"+api.addr, cred.KeyID, cred.Secret)
	go client.Do(ctx, "POST", "/api/partner/v1/orders", nil, body, partnerclient.WithIdempotencyKey("first-try"))
	// Seen by the lock it waits for, not by its SQL, which is the event
	// insert's to choose.
	c.waitFor("the order transaction to wait at its event", 30*time.Second, func() bool {
		var n int64
		c.db.Raw(`SELECT count(*) FROM pg_locks WHERE relation = 'events'::regclass AND NOT granted`).Scan(&n)
		return n == 1
	})
	c.kill(api)
	if err := lock.Rollback().Error; err != nil { // the transaction runs on to its next read of the dead socket
		t.Fatal(err)
	}
	c.waitFor("the killed api's transaction to end", 30*time.Second, func() bool {
		var n int64
		c.db.Raw(`SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%')
			+ (SELECT count(*) FROM pg_locks WHERE relation = 'events'::regclass)`).Scan(&n)
		return n == 0
	})
	count := func(model any, where string, args ...any) int64 {
		var n int64
		if err := c.db.Model(model).Where(where, args...).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if o, e, s := count(&models.Order{}, "domain = ?", domain), count(&models.Event{}, "partner_id = ?", p.ID),
		count(&models.SandboxListing{}, "domain = ? AND sold_at IS NULL", domain); o != 0 || e != 0 || s != 1 {
		t.Fatalf("after the kill: %d orders, %d events, %d unsold listings; want 0, 0, 1", o, e, s)
	}

	api = c.start("api")
	client = partnerclient.New("http://"+api.addr, cred.KeyID, cred.Secret)
	res, answer, err := client.Do(ctx, "POST", "/api/partner/v1/orders", nil, body, partnerclient.WithIdempotencyKey("first-try"))
	if err != nil || res.StatusCode != 409 || !strings.Contains(string(answer), "still being processed") {
		t.Errorf("the killed request's key = %v %s, want 409 until its claim lapses", err, answer)
	}
	res, answer, err = client.Do(ctx, "POST", "/api/partner/v1/orders", nil, body, partnerclient.WithIdempotencyKey("second-try"))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("retry with a new key = %v %d %s", err, res.StatusCode, answer)
	}
	if o, e := count(&models.Order{}, "domain = ?", domain), count(&models.Event{}, "partner_id = ? AND type = ?", p.ID, "order.recorded"); o != 1 || e != 1 {
		t.Errorf("after the retry: %d orders, %d order.recorded events; want 1 and 1", o, e)
	}
}
