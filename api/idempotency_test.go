package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/models"
)

// Every POST that creates something honours Idempotency-Key: the same key
// and body make one thing and replay its answer; another body is a 409.
func TestEveryCreatingPOSTHonoursIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	b := newBrowser(t, env)
	csrf := b.signUp("demo@example.com", "long-enough-pw")
	env.db.Create(&models.Domain{ID: models.NewID(), UserID: userID(t, env, "demo@example.com"), Name: "mine.com", TLD: "com", Status: "active", ExpiresAt: env.now.AddDate(1, 0, 0)})
	count := func(model any) int64 {
		var n int64
		env.db.Model(model).Count(&n)
		return n
	}
	tests := []struct {
		name, path, body, other string
		header                  []string
		rows                    func() int64
	}{
		{"developer key", "/api/v1/keys", `{"name":"laptop"}`, `{"name":"desktop"}`, []string{HeaderCSRFToken, csrf}, func() int64 { return count(&models.APIKey{}) }},
		{"bulk lock", "/api/domains/bulk/lock", `{"domains":["mine.com"]}`, `{"domains":["mine.com"],"options":{"dry_run":true}}`, []string{HeaderCSRFToken, csrf}, func() int64 { return count(&models.BulkOp{}) }},
		{"seo crawl", "/api/tools/seo-crawl", `{"url":"http://site.example.net/"}`, `{"url":"http://site.example.net/x"}`, nil, func() int64 { return count(&models.ToolJob{}) }},
		{"oauth client", "/api/oauth/register", `{"redirect_uris":["https://app.example/cb"]}`, `{"redirect_uris":["https://app.example/other"]}`, nil, func() int64 { return count(&models.OAuthClient{}) }},
		{"account", "/api/auth/signup", `{"email":"new@example.com","password":"long-enough-pw"}`, `{"email":"new2@example.com","password":"long-enough-pw"}`, nil, func() int64 { return count(&models.User{}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.rows()
			send := func(body string) (int, string, string) {
				res, out := b.json("POST", tc.path, body, append([]string{"Idempotency-Key", "key-" + strings.ReplaceAll(tc.name, " ", "-")}, tc.header...)...)
				return res.StatusCode, out, res.Header.Get(HeaderIdempotentReplayed)
			}
			status, first, replayed := send(tc.body)
			if status >= 300 || replayed != "" {
				t.Fatalf("first = %d %s (replayed %q)", status, first, replayed)
			}
			status2, second, replayed := send(tc.body)
			if status2 != status || second != first || replayed != "true" {
				t.Errorf("retry = %d %s (replayed %q), want the first answer replayed", status2, second, replayed)
			}
			if n := tc.rows() - before; n != 1 {
				t.Errorf("%d made by two requests with one key, want 1", n)
			}
			if status, out, _ := send(tc.other); status != 409 || !strings.Contains(out, `"conflict"`) {
				t.Errorf("same key, another body = %d %s, want 409 conflict", status, out)
			}
		})
	}
	// Ops too.
	before := count(&models.Canary{})
	for range 2 {
		r := httptest.NewRequest("POST", "/api/ops/canaries", strings.NewReader(`{"steps":1}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", "canary-1")
		r.SetBasicAuth("ops", "ops-secret")
		env.do(r)
	}
	if n := count(&models.Canary{}) - before; n != 1 {
		t.Errorf("%d canaries from two requests with one key, want 1", n)
	}
}

// userID is the id of the account with email.
func userID(t *testing.T, env *testEnv, email string) string {
	t.Helper()
	var u models.User
	if err := env.db.Take(&u, "email = ?", email).Error; err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// Keys are the caller's own: two people behind one address, or one person
// from two addresses, do not share them.
func TestIdempotencyKeysAreScopedToTheCaller(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	alice, bob := newBrowser(t, env), newBrowser(t, env) // one address: both come from the test's loopback
	aliceCSRF := alice.signUp("alice@example.com", "long-enough-pw")
	bobCSRF := bob.signUp("bob@example.com", "long-enough-pw")
	a, aBody := alice.json("POST", "/api/v1/keys", `{"name":"k"}`, "Idempotency-Key", "shared", HeaderCSRFToken, aliceCSRF)
	b, bBody := bob.json("POST", "/api/v1/keys", `{"name":"k"}`, "Idempotency-Key", "shared", HeaderCSRFToken, bobCSRF)
	if a.StatusCode != 201 || b.StatusCode != 201 || b.Header.Get(HeaderIdempotentReplayed) != "" || aBody == bBody {
		t.Errorf("alice = %d, bob = %d (replayed %q); want two keys, none replayed across people", a.StatusCode, b.StatusCode, b.Header.Get(HeaderIdempotentReplayed))
	}
}

// An answer that says "retry later" is not stored: the retry with the same
// key runs again and may succeed.
func TestRetryLaterAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	runs := 0
	env.srv.engine.POST("/test/lookup", env.srv.idempotent, env.srv.resp.Handle(func(c *gin.Context) error {
		runs++
		if runs == 1 {
			return fault.New(fault.LookupFailed, "RDAP and WHOIS both failed; retry later")
		}
		c.JSON(201, gin.H{"found": true})
		return nil
	}))
	first := env.request("POST", "/test/lookup", `{}`, "Idempotency-Key", "lk")
	retry := env.request("POST", "/test/lookup", `{}`, "Idempotency-Key", "lk")
	if first.Code != 404 || retry.Code != 201 || runs != 2 {
		t.Errorf("first = %d, retry = %d, runs %d; want the retry run again and succeed", first.Code, retry.Code, runs)
	}
}

// A request whose client left after its change was made keeps its answer:
// the retry with the key replays it instead of making the change again. One
// whose handler saw the client leave before it answered (a 499), or a
// stream the client left in the middle of, is run again.
func TestAnAnswerFinishedAfterTheClientLeftIsStored(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	runs := 0
	leave := func() {}
	env.srv.engine.POST("/test/commit", env.srv.idempotent, env.srv.resp.Handle(func(c *gin.Context) error {
		runs++
		leave() // after the commit, before the answer reaches the client
		c.JSON(201, gin.H{"run": runs})
		return nil
	}))
	env.srv.engine.POST("/test/abandoned", env.srv.idempotent, env.srv.resp.Handle(func(c *gin.Context) error {
		runs++
		leave()
		return c.Request.Context().Err() // the handler's work ended with its client
	}))
	env.srv.engine.POST("/test/stream", env.srv.idempotent, func(c *gin.Context) {
		runs++
		c.Writer.WriteString("{\"part\":1}\n")
		c.Writer.Flush()
		leave() // mid-stream
		c.Writer.WriteString("{\"part\":2}\n")
	})
	left := func(path, key string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		leave = cancel
		r := httptest.NewRequest("POST", path, strings.NewReader(`{}`)).WithContext(ctx)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", key)
		env.srv.ServeHTTP(httptest.NewRecorder(), r)
		leave = func() {}
	}

	left("/test/commit", "made")
	retry := env.request("POST", "/test/commit", `{}`, "Idempotency-Key", "made")
	if retry.Code != 201 || retry.Header().Get(HeaderIdempotentReplayed) != "true" || runs != 1 {
		t.Errorf("retry after the client left = %d (replayed %q), runs %d; want the first answer replayed, one run",
			retry.Code, retry.Header().Get(HeaderIdempotentReplayed), runs)
	}
	runs = 0
	left("/test/abandoned", "cut")
	if retry := env.request("POST", "/test/abandoned", `{}`, "Idempotency-Key", "cut"); retry.Header().Get(HeaderIdempotentReplayed) != "" || runs != 2 {
		t.Errorf("retry after an answer cut short = %d (replayed %q), runs %d; want it run again",
			retry.Code, retry.Header().Get(HeaderIdempotentReplayed), runs)
	}
	runs = 0
	left("/test/stream", "streamed")
	if retry := env.request("POST", "/test/stream", `{}`, "Idempotency-Key", "streamed"); retry.Header().Get(HeaderIdempotentReplayed) != "" || runs != 2 {
		t.Errorf("retry after a stream cut short = %d (replayed %q), runs %d; want it run again",
			retry.Code, retry.Header().Get(HeaderIdempotentReplayed), runs)
	}
}

// A replay spends no rate-limit unit, and its RateLimit headers are the
// limit's current state, not the ones stored with the answer.
func TestReplaySpendsNothingAndShowsTheCurrentLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	search := func(q string, header ...string) (status int, remaining string, replayed string) {
		w := env.request("POST", "/api/domain/search", fmt.Sprintf(`{"q":%q}`, q), header...)
		return w.Code, exactHeader(w, "RateLimit-Remaining"), w.Header().Get(HeaderIdempotentReplayed)
	}
	if _, rem, _ := search("keyed.com", "Idempotency-Key", "s1"); rem != "59" {
		t.Fatalf("first search remaining = %s, want 59", rem)
	}
	search("other.com")
	status, rem, replayed := search("keyed.com", "Idempotency-Key", "s1")
	if status != 200 || replayed != "true" || rem != "58" {
		t.Errorf("replay = %d, remaining %s, replayed %q; want 58 (now), not the stored 59", status, rem, replayed)
	}
	if _, rem, _ := search("third.com"); rem != "57" {
		t.Errorf("after the replay remaining = %s, want 57: the replay spent nothing", rem)
	}
}

// An anonymous caller's answers are kept an hour within its address's
// budget; credentials no route checked do not make a caller known; a
// signed-in person's answers are kept the full day.
func TestAnonymousAnswersAreKeptAnHour(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	ttl := func(scope string) time.Duration {
		t.Helper()
		keys := env.redis.Keys(t, "idem:"+scope+":*")
		if len(keys) != 1 {
			t.Fatalf("records of %s: %v, want one", scope, keys)
		}
		return env.redis.Client.TTL(context.Background(), keys[0]).Val()
	}
	crawl := func(key string, header ...string) {
		t.Helper()
		res, out := b.json("POST", "/api/tools/seo-crawl", `{"url":"http://site.example.net/`+key+`"}`, append([]string{"Idempotency-Key", key}, header...)...)
		if res.StatusCode >= 300 {
			t.Fatalf("seo-crawl = %d %s", res.StatusCode, out)
		}
	}
	crawl("anonymous")
	if d := ttl("addr"); d <= 0 || d > idempotency.Anonymous.TTL {
		t.Errorf("an anonymous answer is kept %v, want at most %v", d, idempotency.Anonymous.TTL)
	}
	crawl("made-up-token", "Authorization", "Bearer made-up")
	if d := ttl("auth"); d <= 0 || d > idempotency.Anonymous.TTL {
		t.Errorf("an answer to a token no route checked is kept %v, want at most %v (anonymous)", d, idempotency.Anonymous.TTL)
	}
	csrf := b.signUp("kept@example.com", "long-enough-pw")
	if res, out := b.json("POST", "/api/v1/keys", `{"name":"laptop"}`, "Idempotency-Key", "signed-in", HeaderCSRFToken, csrf); res.StatusCode != 201 {
		t.Fatalf("create key = %d %s", res.StatusCode, out)
	}
	if d := ttl("user"); d <= idempotency.Anonymous.TTL {
		t.Errorf("a signed-in person's answer is kept %v, want the full %v", d, idempotency.TTL)
	}
}
