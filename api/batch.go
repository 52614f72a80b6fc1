package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/ratelimit"
)

// batchLimit is the per-IP rate of batch requests themselves; each
// operation also counts against its own endpoint's limit.
var batchLimit = ratelimit.PerMinute("batch", 60)

// maxBatchOps is SPEC §8's batch size; batchParallel is how many of one
// batch's operations run at once.
const (
	maxBatchOps   = 20
	batchParallel = 4
	// batchWriteTimeout is the batch's time to answer, in place of the
	// server's: its operations wait on slow work (a WHOIS lookup waits up
	// to lookup.Wait), batchParallel at a time.
	batchWriteTimeout = (maxBatchOps/batchParallel + 1) * lookup.Wait
)

// batchTarget is the single call a batch operation stands for.
type batchTarget struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// params are the operation's parameters and whether each is required.
	params map[string]bool
	// inPath names the parameter that is a segment of the call's path, if
	// one is: without it there is no call to make (a direct client cannot
	// leave a segment out), so its absence is the batch's 400.
	inPath string
	// requestFunc gives the single call's request target (path and query,
	// escaped as a client puts them on the request line) and body from params.
	requestFunc func(params map[string]json.RawMessage) (target string, body []byte)
}

// batchOps maps SPEC §4.1's batch operations onto their single calls.
var batchOps = map[string]batchTarget{
	"search_domain": {Method: http.MethodPost, Path: "/api/domain/search", params: map[string]bool{"q": true},
		requestFunc: func(p map[string]json.RawMessage) (string, []byte) {
			return "/api/domain/search", jsonBody(p)
		}},
	"whois_lookup": {Method: http.MethodPost, Path: "/api/tools/whois", params: map[string]bool{"domain": true},
		requestFunc: func(p map[string]json.RawMessage) (string, []byte) {
			return "/api/tools/whois", jsonBody(p)
		}},
	"tld_registration_price": {Method: http.MethodGet, Path: "/api/pricing/tld", params: map[string]bool{"tld": true, "op": false},
		requestFunc: func(p map[string]json.RawMessage) (string, []byte) {
			q := url.Values{}
			for k, v := range p {
				q.Set(k, queryValue(v))
			}
			if len(q) == 0 {
				return "/api/pricing/tld", nil
			}
			return "/api/pricing/tld?" + q.Encode(), nil
		}},
	"tld_requirements": {Method: http.MethodGet, Path: "/api/tlds/{tld}/metadata", params: map[string]bool{"tld": true}, inPath: "tld",
		requestFunc: func(p map[string]json.RawMessage) (string, []byte) {
			return "/api/tlds/" + url.PathEscape(queryValue(p["tld"])) + "/metadata", nil
		}},
}

// jsonBody is the JSON object of a POST operation's parameters, passed on
// as given so the single call's validation judges their types.
func jsonBody(p map[string]json.RawMessage) []byte {
	b, _ := json.Marshal(p) // valid JSON values always marshal
	return b
}

// queryValue is a parameter as a GET call's query or path value: a string
// as is, anything else as its JSON text (which the call then judges).
func queryValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

type batchRequest struct {
	Operations []batchOperation `json:"operations"`
}

type batchOperation struct {
	Op     json.RawMessage `json:"op"` // a string; anything else fails this operation only
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
}

type batchResult struct {
	ID     string  `json:"id"`
	Op     *string `json:"op"`
	Status int     `json:"status"`
	Body   any     `json:"body"`
	// Replayed says the answer is the one an earlier send of the batch,
	// with its Idempotency-Key, kept for this operation, which did not run
	// again: a single call's Idempotent-Replayed.
	Replayed bool `json:"replayed,omitempty"`
}

type batchResponse struct {
	Results []batchResult `json:"results"`
	Count   int           `json:"count"`
	Failed  int           `json:"failed"`
}

// runBatch answers POST /api/batch: each operation is sent through the
// engine as the single call it stands for, from the same client address
// and with nothing else of the batch request, so it meets the same
// validation, limits and quotas as a direct anonymous call and can reach
// nothing more. Only a malformed envelope fails the batch; a caller over
// batchLimit is refused (429) before any operation runs. A batch sent with
// an Idempotency-Key keeps its operations' answers as batchKeep says.
func (s *Server) runBatch(c *gin.Context) error {
	var req batchRequest
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	n := len(req.Operations)
	if req.Operations == nil || n == 0 || n > maxBatchOps {
		return fault.New(fault.BadRequest, "operations must hold 1 to %d operations, got %d", maxBatchOps, n)
	}
	keep := s.newBatchKeep(c, n)
	results := make([]batchResult, n)
	var g errgroup.Group
	g.SetLimit(batchParallel)
	for i, op := range req.Operations {
		g.Go(func() error {
			results[i] = s.dispatch(c, i, op, keep)
			return nil
		})
	}
	g.Wait()
	resp := batchResponse{Results: results, Count: n}
	retryLater := false
	for _, r := range results {
		if r.Status >= 400 {
			resp.Failed++
		}
		retryLater = retryLater || saysRetryLater(r)
	}
	if retryLater {
		httpjson.MarkRetryLater(c)
	}
	keep.settle(context.WithoutCancel(c.Request.Context()), results, retryLater)
	c.JSON(http.StatusOK, resp)
	return nil
}

// batchKeep keeps the answers of a batch sent with an Idempotency-Key one
// operation at a time. A batch with an operation that says "retry later"
// (saysRetryLater) is not kept under its key, so that its retry runs; the
// answers of its other operations are kept then, and the retry replays
// them instead of running them again, which would spend their units again
// (a WHOIS lookup's, of 10 a day). A batch answered in full is kept whole
// by idempotent, and the answers of its operations an earlier send kept
// are let go.
//
// An operation's key is the batch's key, the batch's fingerprint and the
// operation's index: only the same batch sent again with the same key
// finds it, and no client can send it (it holds NULs, which an
// Idempotency-Key cannot). The batch route is anonymous, so the answers
// are kept as an anonymous caller's, an hour within its address's budget.
// While the batch runs it holds its own key, which keeps a retry from
// running beside it: its operations' keys need no claims of their own.
type batchKeep struct {
	store  *idempotency.Store
	log    *slog.Logger
	held   heldKey
	client string // whose budget the answers count against
	ops    []keptOp
}

// keptOp is an operation of a kept batch: its key, its single call's
// fingerprint, and what became of it.
type keptOp struct {
	key, fp  string
	replayed bool // answered from an earlier send's record
	whole    bool // answered while the batch's client was still there (a stream it left may be cut short)
}

// newBatchKeep is the keep of c's batch of n operations; nil, which keeps
// nothing, when the batch holds no Idempotency-Key.
func (s *Server) newBatchKeep(c *gin.Context, n int) *batchKeep {
	held, ok := heldKeyOf(c)
	if !ok {
		return nil
	}
	return &batchKeep{store: s.svc.Idempotency, log: s.log, held: held, client: httpjson.Client(c), ops: make([]keptOp, n)}
}

// replay returns the answer an earlier send of the batch kept for its
// i-th operation, the single call of fingerprint fp, if there is one; the
// operation runs otherwise (and when the record cannot be read).
func (k *batchKeep) replay(ctx context.Context, i int, fp string) (status int, body json.RawMessage, ok bool) {
	if k == nil {
		return 0, nil, false
	}
	key := k.held.key + "\x00" + k.held.fp + "\x00" + strconv.Itoa(i)
	k.ops[i] = keptOp{key: key, fp: fp}
	prior, found, err := k.store.Stored(ctx, k.held.scope, key)
	if err != nil {
		k.log.WarnContext(ctx, "batch operation: reading its kept answer failed; it runs", "index", i, "err", err)
	}
	if !found || prior.Running || prior.Fingerprint != fp {
		return 0, nil, false
	}
	k.ops[i].replayed = true
	return prior.Status, prior.Body, true
}

// answered notes that the i-th operation ran and has its answer: a whole
// one if the batch's client is still there.
func (k *batchKeep) answered(ctx context.Context, i int) {
	if k != nil && ctx.Err() == nil {
		k.ops[i].whole = true
	}
}

// settle keeps, when the batch says retry later, the whole answers of the
// operations that ran and do not; when the batch is answered in full
// (and kept whole), it lets go of the answers an earlier send kept. ctx
// is not the request's: the answers are settled whatever becomes of the
// batch's client (the one that left is the one most likely to retry).
func (k *batchKeep) settle(ctx context.Context, results []batchResult, retryLater bool) {
	if k == nil {
		return
	}
	for i, op := range k.ops {
		switch {
		case op.key == "": // it could not run (a bad op), and was not looked up
		case retryLater && op.whole && !saysRetryLater(results[i]):
			body, _ := json.Marshal(results[i].Body) // a decoded body always marshals
			r := idempotency.Record{Fingerprint: op.fp, Status: results[i].Status, Body: body}
			switch err := k.store.CompleteWithin(ctx, k.held.scope, op.key, r, k.client, idempotency.Anonymous); {
			case errors.Is(err, idempotency.ErrOverBudget):
				k.log.InfoContext(ctx, "batch operation: an anonymous answer was not kept", "index", i, "err", err)
			case err != nil:
				k.log.WarnContext(ctx, "batch operation: keeping its answer failed", "index", i, "err", err)
			}
		case !retryLater && op.replayed:
			if err := k.store.Release(ctx, k.held.scope, op.key); err != nil {
				k.log.WarnContext(ctx, "batch operation: letting go of its kept answer failed", "index", i, "err", err)
			}
		}
	}
}

// saysRetryLater reports whether an operation's answer is one a retry may
// change: a refusal for now (429), a failure of ours (5xx), one cut short
// because the client left (499), or a lookup that failed.
func saysRetryLater(r batchResult) bool {
	if r.Status == http.StatusTooManyRequests || r.Status >= 500 || r.Status == httpjson.StatusClientClosed {
		return true
	}
	raw, ok := r.Body.(json.RawMessage)
	if !ok {
		return false
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Error.Code == "lookup_failed"
}

// failed is res answered 400 validation_error with msg: what the single
// call would answer to the same mistake.
func (res batchResult) failed(msg string) batchResult {
	res.Status = http.StatusBadRequest
	res.Body = gin.H{"error": gin.H{"code": "validation_error", "message": msg}}
	return res
}

// batchID is an operation's id as a string: the one given (a string or a
// number), or its index.
func batchID(raw json.RawMessage, index int) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return strconv.Itoa(index), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err == nil {
		return num.String(), nil
	}
	return "", fmt.Errorf("must be a string or a number")
}

// dispatch runs the i-th operation through the engine and captures its
// answer. An operation that cannot run (an unknown or missing op, a bad id
// or params) is a failed result of its own, and the others run.
//
// The inner request is the one a client would send for the single call:
// its target is parsed as net/http parses a request line, so the handler
// (and the router, which cleans the path) sees what a direct call with the
// same parameters sees, path tricks included. Of the batch request it
// carries only the client address (RemoteAddr, and X-Forwarded-For, which
// is believed only from a trusted proxy as for any request), the Host and
// the request id. No credential passes: not Authorization, Cookie,
// x-api-key or x-api-secret, nor the TLS state (client certificates). Nor
// does Idempotency-Key: it covers the batch as a whole (the batch route is
// idempotent), and one key on several operations would make them collide.
// keep replays the operation's answer kept by an earlier send of the
// batch, if there is one, in place of the call (which spends nothing).
func (s *Server) dispatch(c *gin.Context, i int, op batchOperation, keep *batchKeep) batchResult {
	id, err := batchID(op.ID, i)
	res := batchResult{ID: id}
	if err != nil {
		res.ID = strconv.Itoa(i)
		return res.failed("id " + err.Error())
	}
	var name string
	if json.Unmarshal(op.Op, &name) != nil || name == "" {
		return res.failed("op is required: one of " + strings.Join(batchOpNames(), ", "))
	}
	target, ok := batchOps[name]
	if !ok {
		return res.failed(fmt.Sprintf("op %q is not one of %s", name, strings.Join(batchOpNames(), ", ")))
	}
	res.Op = &name
	params, err := batchParams(op.Params)
	if err != nil {
		return res.failed("params " + err.Error())
	}
	if p := target.inPath; p != "" {
		if v, ok := params[p]; !ok || string(v) == "null" || strings.TrimSpace(queryValue(v)) == "" {
			return res.failed(fmt.Sprintf("params.%s is required", p))
		}
	}
	uri, body := target.requestFunc(params)
	u, err := url.ParseRequestURI(uri)
	if err != nil { // cannot happen: the target is built from escaped parts
		s.log.ErrorContext(c.Request.Context(), "batch operation target", "op", name, "err", err)
		res.Status, res.Body = http.StatusInternalServerError, gin.H{"error": gin.H{"code": "internal_error", "message": "internal error"}}
		return res
	}
	ctx := c.Request.Context()
	if status, kept, ok := keep.replay(ctx, i, idempotency.Fingerprint(target.Method, uri, body)); ok {
		res.Status, res.Body, res.Replayed = status, kept, true
		return res
	}
	sub, _ := http.NewRequestWithContext(ctx, target.Method, "/", bytes.NewReader(body))
	sub.URL, sub.RequestURI, sub.Host = u, uri, c.Request.Host
	sub.RemoteAddr = c.Request.RemoteAddr
	if xff := c.Request.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		sub.Header["X-Forwarded-For"] = slices.Clone(xff)
	}
	sub.Header.Set(HeaderRequestID, c.Writer.Header().Get(HeaderRequestID))
	if body != nil {
		sub.Header.Set("Content-Type", "application/json")
	}
	w := &bufferWriter{header: http.Header{}, status: http.StatusOK}
	s.engine.ServeHTTP(w, sub)
	keep.answered(ctx, i)
	res.Status, res.Body = w.status, decodeBody(w.Header().Get("Content-Type"), w.body.Bytes())
	return res
}

// batchParams reads an operation's params, a JSON object (absent is empty).
func batchParams(raw json.RawMessage) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(raw) == 0 || string(raw) == "null" {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("must be a JSON object")
	}
	return m, nil
}

// decodeBody is a single call's body as JSON: an NDJSON stream becomes the
// array of its events.
func decodeBody(contentType string, b []byte) any {
	if strings.HasPrefix(contentType, "application/x-ndjson") {
		events := []json.RawMessage{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				events = append(events, json.RawMessage(bytes.Clone(line)))
			}
		}
		return events
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	return string(b)
}

// bufferWriter is the http.ResponseWriter of a batch operation.
type bufferWriter struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *bufferWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush lets streaming handlers flush; the buffer keeps everything.
func (w *bufferWriter) Flush() {}

func batchOpNames() []string {
	return []string{"search_domain", "whois_lookup", "tld_registration_price", "tld_requirements"}
}

// batchCatalog answers GET /api/batch: the operations, the cap and an example.
func (s *Server) batchCatalog(c *gin.Context) error {
	type param struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	}
	type entry struct {
		Op     string  `json:"op"`
		SameAs string  `json:"same_as"`
		Params []param `json:"params"`
	}
	var ops []entry
	for _, name := range batchOpNames() {
		t := batchOps[name]
		e := entry{Op: name, SameAs: t.Method + " " + t.Path}
		for _, p := range []string{"q", "domain", "tld", "op"} {
			if req, ok := t.params[p]; ok {
				e.Params = append(e.Params, param{Name: p, Required: req})
			}
		}
		ops = append(ops, e)
	}
	c.JSON(http.StatusOK, gin.H{
		"operations":     ops,
		"max_operations": maxBatchOps,
		"rate_limit": fmt.Sprintf("%d batches per minute per IP; each operation also counts against its own endpoint's per-IP limit or quota",
			batchLimit.Limit),
		"example": gin.H{"operations": []gin.H{
			{"id": "search", "op": "search_domain", "params": gin.H{"q": "example.com"}},
			{"id": "whois", "op": "whois_lookup", "params": gin.H{"domain": "example.com"}},
			{"id": "price", "op": "tld_registration_price", "params": gin.H{"tld": "com", "op": "register"}},
			{"id": "rules", "op": "tld_requirements", "params": gin.H{"tld": "com"}},
		}},
	})
	return nil
}
