package main

// HTTP in front of Microsoft's fake transport. The generated transport is an
// in-process policy.Transporter that dispatches on the API name the Go SDK puts
// into the request context (runtime.CtxAPINameKey); a client in another
// process sends plain HTTP, so this handler derives that name from method and
// path. It also translates the Go fake's LRO protocol (a Fake-Poller-Status
// header, polls at <path>/get/fake/status) into ARM's (Azure-AsyncOperation
// with a {"status": ...} body), which any ARM SDK understands.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9/fake"
)

const (
	pollSuffix   = "/get/fake/status" // the Go fake's poller path (azcore internal/pollers/fake)
	pollerStatus = "Fake-Poller-Status"
	// An LRO nobody polled for this long is drained, so a client that gave up
	// (its call timed out) does not lock the resource forever.
	lroAbandonAfter = 15 * time.Second
)

var (
	prefix   = `^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Network/routeTables`
	reTables = regexp.MustCompile(prefix + `$`)
	reTable  = regexp.MustCompile(prefix + `/([^/]+)$`)
	reRoutes = regexp.MustCompile(prefix + `/([^/]+)/routes$`)
	reRoute  = regexp.MustCompile(prefix + `/([^/]+)/routes/([^/]+)$`)
)

type fault struct {
	Method       string          `json:"method"` // "" = any ARM request (polls excepted)
	Table        string          `json:"table"`  // route table name, "" = any
	Times        int             `json:"times"`  // requests it applies to (default 1)
	Status       int             `json:"status"` // answer with this error instead of dispatching
	Code         string          `json:"code"`
	Message      string          `json:"message"`
	RetryAfter   string          `json:"retryAfter"`   // Retry-After header of that answer
	ForeignRoute json.RawMessage `json:"foreignRoute"` // an armnetwork.Route another writer puts first
	LROError     string          `json:"lroError"`     // the request's LRO ends Failed with this code
}

type logEntry struct {
	Seq     int    `json:"seq"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	API     string `json:"api"`
	Status  int    `json:"status"`
	IfMatch string `json:"ifMatch,omitempty"`
	Token   string `json:"token,omitempty"`
}

type lroEntry struct {
	api      string
	failCode string // an injected failure: the LRO ends Failed with this code
	path     string // the request path as sent (the fake's tracker is case-sensitive)
	key      string // table key whose provisioning state the LRO holds
	lastSeen time.Time
}

type server struct {
	st        *state
	mu        sync.Mutex
	transport *fake.ServerFactoryTransport // replaced on reset: it tracks in-flight LROs
	faults    []*fault
	log       []logEntry
	lros      map[string]*lroEntry
	tokens    int
}

func newServer() *server {
	st := newState()
	return &server{st: st, transport: fake.NewServerFactoryTransport(st.server()), lros: map[string]*lroEntry{}}
}

// apiName maps method and path to the generated fake's API name, with the
// subscription, resource group and table the request addresses.
func apiName(method, path string) (api, sub, rg, table string) {
	if m := reRoute.FindStringSubmatch(path); m != nil {
		api = map[string]string{"PUT": "RoutesClient.BeginCreateOrUpdate", "GET": "RoutesClient.Get", "DELETE": "RoutesClient.BeginDelete"}[method]
		return api, m[1], m[2], m[3]
	}
	if m := reRoutes.FindStringSubmatch(path); m != nil && method == "GET" {
		return "RoutesClient.NewListPager", m[1], m[2], m[3]
	}
	if m := reTable.FindStringSubmatch(path); m != nil {
		api = map[string]string{"PUT": "RouteTablesClient.BeginCreateOrUpdate", "GET": "RouteTablesClient.Get",
			"DELETE": "RouteTablesClient.BeginDelete", "PATCH": "RouteTablesClient.UpdateTags"}[method]
		return api, m[1], m[2], m[3]
	}
	if m := reTables.FindStringSubmatch(path); m != nil && method == "GET" {
		return "RouteTablesClient.NewListPager", m[1], m[2], ""
	}
	return "", "", "", ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeARMError(w http.ResponseWriter, e *armError) {
	for k, vs := range e.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("x-ms-error-code", e.code)
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.message}})
}

// asARMError turns what the fake transport returned into the error ARM would send.
func asARMError(err error) *armError {
	var ae *armError
	if errors.As(err, &ae) {
		return ae
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &armError{status: re.StatusCode, code: re.ErrorCode, message: re.ErrorCode}
	}
	return &armError{status: http.StatusBadRequest, code: "InvalidRequest", message: err.Error()}
}

func (s *server) record(e logEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Seq = len(s.log) + 1
	s.log = append(s.log, e)
}

// takeFault returns the first fault matching a request, consuming one use.
func (s *server) takeFault(method, table string) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method == "" || strings.EqualFold(f.Method, method)) && (f.Table == "" || strings.EqualFold(f.Table, table)) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_fake/"):
		s.control(w, r)
	case strings.TrimSuffix(r.URL.Path, "/") == "/metadata/identity/oauth2/token":
		s.imds(w, r)
	default:
		s.arm(w, r)
	}
}

func (s *server) arm(w http.ResponseWriter, r *http.Request) {
	entry := logEntry{Method: r.Method, Path: r.URL.Path, IfMatch: r.Header.Get("If-Match")}
	rec := &statusRecorder{ResponseWriter: w}
	defer func() { entry.Status = rec.status; s.record(entry) }()
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "Bearer ") || len(auth) <= len("Bearer ") {
		writeARMError(rec, &armError{status: 401, code: "AuthenticationFailed", message: "Authentication failed. The 'Authorization' header is missing."})
		return
	}
	entry.Token = strings.TrimPrefix(auth, "Bearer ")
	if r.URL.Query().Get("api-version") == "" {
		writeARMError(rec, &armError{status: 400, code: "MissingApiVersionParameter", message: "The api-version query parameter (?api-version=) is required for all requests."})
		return
	}
	if strings.HasSuffix(r.URL.Path, pollSuffix) {
		entry.API = "poll"
		s.poll(rec, r)
		return
	}
	api, sub, rg, table := apiName(r.Method, r.URL.Path)
	entry.API = api
	if api == "" {
		writeARMError(rec, &armError{status: 404, code: "InvalidResourceType", message: fmt.Sprintf("No route for %s %s in this fake.", r.Method, r.URL.Path)})
		return
	}
	ctx := context.WithValue(r.Context(), runtime.CtxAPINameKey{}, api)
	ctx = context.WithValue(ctx, ctxSubscription, sub)
	ctx = context.WithValue(ctx, ctxIfMatch, r.Header.Get("If-Match"))
	ctx = context.WithValue(ctx, ctxIfNoneMatch, r.Header.Get("If-None-Match"))
	if f := s.takeFault(r.Method, table); f != nil {
		if len(f.ForeignRoute) > 0 {
			if err := s.foreign(sub, rg, table, f.ForeignRoute); err != nil {
				writeARMError(rec, &armError{status: 400, code: "InvalidFault", message: err.Error()})
				return
			}
		}
		ctx = context.WithValue(ctx, ctxLROError, f.LROError)
		if f.Status != 0 {
			e := &armError{status: f.Status, code: f.Code, message: f.Message, header: http.Header{}}
			if f.RetryAfter != "" {
				e.header.Set("Retry-After", f.RetryAfter)
			}
			writeARMError(rec, e)
			return
		}
	}
	begin := strings.HasPrefix(api, "RouteTablesClient.Begin") || strings.HasPrefix(api, "RoutesClient.Begin")
	key := strings.ToLower(r.URL.Path)
	if begin && s.locked(key) {
		// Microsoft.Network's answer to a write while another one runs on the resource.
		writeARMError(rec, &armError{status: 429, code: "RetryableErrorDueToAnotherOperation",
			message: "Operation could not be completed as another operation is in progress on the resource.",
			header:  http.Header{"Retry-After": {"1"}}})
		return
	}
	failCode, _ := ctx.Value(ctxLROError).(string)
	resp, err := s.do(r.WithContext(ctx))
	if err != nil {
		writeARMError(rec, asARMError(err))
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if begin && failCode != "" && resp.Header.Get(pollerStatus) != "InProgress" {
		writeARMError(rec, &armError{status: http.StatusInternalServerError, code: failCode, message: "The operation failed: " + failCode})
		return
	}
	if begin && resp.Header.Get(pollerStatus) == "InProgress" {
		s.mu.Lock()
		s.lros[key] = &lroEntry{api: api, failCode: failCode, path: r.URL.Path, key: tableKey(sub, rg, table), lastSeen: time.Now()}
		s.mu.Unlock()
		op := fmt.Sprintf("http://%s%s%s?api-version=%s", r.Host, r.URL.Path, pollSuffix, r.URL.Query().Get("api-version"))
		rec.Header().Set("Azure-AsyncOperation", op)
		if r.Method == http.MethodDelete {
			rec.Header().Set("Location", op)
			rec.WriteHeader(http.StatusAccepted)
			return
		}
		// The resource as it stands while the operation runs (provisioningState Updating).
		if t, ok := s.st.snapshot()[tableID(sub, rg, table)]; ok && api == "RouteTablesClient.BeginCreateOrUpdate" {
			writeJSON(rec, resp.StatusCode, t)
			return
		}
		rec.WriteHeader(resp.StatusCode)
		return
	}
	copyResponse(rec, resp)
}

// locked tells whether an LRO runs on the resource; an abandoned one is drained.
func (s *server) locked(key string) bool {
	s.mu.Lock()
	e := s.lros[key]
	s.mu.Unlock()
	if e == nil {
		return false
	}
	if time.Since(e.lastSeen) < lroAbandonAfter {
		return true
	}
	for i := 0; i < 100; i++ {
		if done, _ := s.pollOnce(context.Background(), key, e); done {
			break
		}
	}
	return false
}

// pollOnce advances one LRO; done when it reached a terminal state.
func (s *server) pollOnce(ctx context.Context, key string, e *lroEntry) (bool, error) {
	req, _ := http.NewRequestWithContext(context.WithValue(ctx, runtime.CtxAPINameKey{}, e.api), http.MethodGet, e.path+pollSuffix, nil)
	resp, err := s.do(req)
	if err == nil && e.failCode != "" && resp.Header.Get(pollerStatus) != "InProgress" {
		_ = resp.Body.Close()
		err = &armError{status: http.StatusInternalServerError, code: e.failCode, message: "The operation failed: " + e.failCode}
	}
	if err == nil {
		defer func() { _ = resp.Body.Close() }()
		if resp.Header.Get(pollerStatus) == "InProgress" {
			s.mu.Lock()
			e.lastSeen = time.Now()
			s.mu.Unlock()
			return false, nil
		}
	}
	s.mu.Lock()
	delete(s.lros, key)
	s.mu.Unlock()
	if err == nil {
		s.st.markSucceeded(e.key)
	}
	return true, err
}

func (s *server) do(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	t := s.transport
	s.mu.Unlock()
	return t.Do(req)
}

func (s *server) poll(w http.ResponseWriter, r *http.Request) {
	key := strings.ToLower(strings.TrimSuffix(r.URL.Path, pollSuffix))
	s.mu.Lock()
	e := s.lros[key]
	s.mu.Unlock()
	if e == nil {
		writeARMError(w, &armError{status: 404, code: "NotFound", message: "No operation is in progress on " + key})
		return
	}
	done, err := s.pollOnce(r.Context(), key, e)
	switch {
	case !done:
		writeJSON(w, http.StatusOK, map[string]string{"status": "InProgress"})
	case err != nil:
		ae := asARMError(err)
		writeJSON(w, http.StatusOK, map[string]any{"status": "Failed", "error": map[string]string{"code": ae.code, "message": "The operation failed: " + ae.code}})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "Succeeded"})
	}
}

func (s *server) foreign(sub, rg, table string, raw json.RawMessage) error {
	var route armnetwork.Route
	if err := json.Unmarshal(raw, &route); err != nil || route.Name == nil {
		return fmt.Errorf("foreignRoute is not a route with a name: %v", err)
	}
	s.st.foreignWrite(sub, rg, table, route)
	return nil
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for k, vs := range resp.Header {
		if strings.EqualFold(k, pollerStatus) {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
