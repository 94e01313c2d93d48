package main

// Routing, the request log, bearer tokens, faults, and the fake's other faces:
// the metadata server and the control endpoints tests use (testenv/README.md
// lists them); the token endpoints are in auth.go.

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud"
	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/meta"
	computega "google.golang.org/api/compute/v1"
)

type logEntry struct {
	Seq       int    `json:"seq"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	API       string `json:"api"`
	Status    int    `json:"status"`
	Filter    string `json:"filter,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
	Token     string `json:"token,omitempty"`
	// The service account a key-file assertion (oauth2.token) claimed to be.
	Issuer string `json:"issuer,omitempty"`
	// Why the token endpoint refused an assertion.
	Refused string `json:"refused,omitempty"`
}

// fault is the next answer for matching requests, `times` times: an error
// answer, or (opError) an accepted write whose operation ends in error.
type fault struct {
	Method     string   `json:"method,omitempty"`
	API        string   `json:"api,omitempty"`
	Name       string   `json:"name,omitempty"`
	Times      int      `json:"times,omitempty"`
	Status     int      `json:"status,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Message    string   `json:"message,omitempty"`
	RetryAfter string   `json:"retryAfter,omitempty"`
	OpError    *opError `json:"opError,omitempty"`
}

type server struct {
	mu        sync.Mutex
	gce       *cloud.MockGCE
	log       []logEntry
	faults    []*fault
	ops       map[string]*opEntry
	opSeq     int
	ids       int
	tokens    int
	opPolls   int
	waitSteps int
	pageSize  int
	endpoint  string
	// routesQuota is the project's ROUTES quota (quota.go); 0 means the default.
	routesQuota int
	// Service accounts' public keys by email; tokens issued; whether Compute calls need one of them.
	accounts      map[string]*rsa.PublicKey
	issued        map[string]bool
	requireIssued bool
}

func newServer(endpoint string) *server {
	s := &server{endpoint: endpoint}
	s.reset()
	return s
}

func (s *server) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gce = cloud.NewMockGCE(&cloud.SingleProjectRouter{ID: "fake-project"})
	s.log, s.faults, s.ops = nil, nil, map[string]*opEntry{}
	s.opPolls, s.waitSteps, s.pageSize = 2, 0, 0
	s.routesQuota = 0
	s.accounts, s.issued, s.requireIssued = map[string]*rsa.PublicKey{}, map[string]bool{}, false
	seedZones(s.gce)
}

func (s *server) record(e logEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Seq = len(s.log) + 1
	s.log = append(s.log, e)
}

func (s *server) takeFault(method, api, name string) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && (f.API == "" || f.API == api) && (f.Name == "" || f.Name == name) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
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
		r.status = 200
	}
	return r.ResponseWriter.Write(b)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_fake/"):
		s.control(w, r)
	case strings.HasPrefix(r.URL.Path, "/computeMetadata/"):
		s.metadata(w, r)
	case r.URL.Path == "/token" || r.URL.Path == "/alt-token":
		s.token(w, r)
	default:
		s.compute(w, r)
	}
}

func (s *server) compute(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	q := r.URL.Query()
	entry := logEntry{Method: r.Method, Path: r.URL.Path, Filter: q.Get("filter"), PageToken: q.Get("pageToken")}
	defer func() { entry.Status = rec.status; s.record(entry) }()
	var api, project, name string
	var run func(f *fault) *apiError
	if m := routesPath.FindStringSubmatch(r.URL.Path); m != nil {
		project, name = m[1], m[2]
		switch {
		case r.Method == "GET" && name == "":
			api, run = "routes.list", func(*fault) *apiError { return s.listRoutes(rec, r, project) }
		case r.Method == "POST" && name == "":
			api, run = "routes.insert", func(f *fault) *apiError { return s.insertRoute(rec, r, project, f) }
		case r.Method == "GET":
			api, run = "routes.get", func(*fault) *apiError { return s.getRoute(rec, r, project, name) }
		case r.Method == "DELETE":
			api, run = "routes.delete", func(f *fault) *apiError { return s.deleteRoute(rec, r, project, name, f) }
		}
	} else if m := projectPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == "GET" {
		project = m[1]
		api, run = "projects.get", func(*fault) *apiError { return s.getProject(rec, r, project) }
	} else if m := instancePath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == "GET" {
		project, name = m[1], m[3]
		api, run = "instances.get", func(*fault) *apiError { return s.getInstance(rec, r, project, m[2], name) }
	} else if m := zonesPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == "GET" {
		project = m[1]
		api, run = "zones.list", func(*fault) *apiError { return s.listZones(rec, r, project) }
	} else if m := operationPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == "GET" && m[3] == "" {
		project, name = m[1], m[2]
		api, run = "globalOperations.get", func(*fault) *apiError { return s.getOperation(rec, r, project, name, false) }
	} else if m != nil && r.Method == "POST" && m[3] != "" {
		project, name = m[1], m[2]
		api, run = "globalOperations.wait", func(*fault) *apiError { return s.getOperation(rec, r, project, name, true) }
	}
	entry.API = api
	if run == nil {
		writeAPIError(rec, &apiError{code: 404, reason: "notFound", message: "The requested URL " + r.URL.Path + " was not found on this server."})
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	entry.Token = token
	if !ok || token == "" {
		writeAPIError(rec, &apiError{code: 401, reason: "required", message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."})
		return
	}
	if !s.bearerAccepted(token) {
		writeAPIError(rec, &apiError{code: 401, reason: "authError", message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."})
		return
	}
	f := s.takeFault(r.Method, api, name)
	if f != nil && f.OpError == nil {
		status := f.Status
		if status == 0 {
			status = 500
		}
		writeAPIError(rec, &apiError{code: status, reason: f.Reason, message: f.Message, retryAfter: f.RetryAfter})
		return
	}
	if e := run(f); e != nil {
		writeAPIError(rec, e)
	}
}

// metadata answers like the GCE metadata server for what google-auth-library
// asks of it (reached with GCE_METADATA_HOST): its presence, the project, and
// the default service account's access token.
func (s *server) metadata(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	entry := logEntry{Method: r.Method, Path: r.URL.Path, API: "metadata"}
	defer func() { entry.Status = rec.status; s.record(entry) }()
	rec.Header().Set("Metadata-Flavor", "Google")
	if r.Header.Get("Metadata-Flavor") != "Google" {
		rec.WriteHeader(403)
		_, _ = io.WriteString(rec, "Missing Metadata-Flavor:Google header.\n")
		return
	}
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/computeMetadata/v1/instance/service-accounts/default/token":
		entry.API = "metadata.token"
		writeJSON(rec, 200, map[string]any{"access_token": s.issue("metadata-token"), "expires_in": 3599, "token_type": "Bearer"})
	case "/computeMetadata/v1/project/project-id":
		_, _ = io.WriteString(rec, "fake-project")
	case "/computeMetadata/v1/instance", "/computeMetadata/v1":
		_, _ = io.WriteString(rec, "attributes/\nservice-accounts/\nzone\n")
	case "/computeMetadata/v1/instance/zone":
		_, _ = io.WriteString(rec, "projects/123456789/zones/europe-west1-b")
	default:
		rec.WriteHeader(404)
	}
}

func parseForm(body []byte) (map[string]string, error) {
	req, err := http.NewRequest("POST", "/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := req.ParseForm(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range req.PostForm {
		out[k] = v[0]
	}
	return out, nil
}

type instanceSeed struct {
	Project string `json:"project"`
	Zone    string `json:"zone"`
	Name    string `json:"name"`
}

func (s *server) control(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	switch r.Method + " " + r.URL.Path {
	case "POST /_fake/reset":
		s.reset()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_fake/state":
		routes, _ := s.gce.Routes().List(context.Background(), nil)
		out := []*computega.Route{}
		for _, rt := range routes {
			out = append(out, s.withWarnings(rt))
		}
		writeJSON(w, 200, map[string]any{"routes": out})
	case "GET /_fake/requests":
		s.mu.Lock()
		out := append([]logEntry{}, s.log...)
		s.mu.Unlock()
		writeJSON(w, 200, out)
	case "POST /_fake/faults":
		var fs []*fault
		if err := json.Unmarshal(body, &fs); err != nil {
			writeJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		s.mu.Lock()
		for _, f := range fs {
			if f.Times <= 0 {
				f.Times = 1
			}
			s.faults = append(s.faults, f)
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "DELETE /_fake/faults":
		s.mu.Lock()
		s.faults = nil
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_fake/faults":
		s.mu.Lock()
		n := len(s.faults)
		s.mu.Unlock()
		writeJSON(w, 200, map[string]int{"pending": n})
	case "POST /_fake/config":
		var c struct {
			OpPolls     *int `json:"opPolls"`
			WaitSteps   *int `json:"waitSteps"`
			PageSize    *int `json:"pageSize"`
			RoutesQuota *int `json:"routesQuota"`
			// Compute calls must carry a token the fake issued (401 otherwise).
			RequireIssuedTokens *bool `json:"requireIssuedTokens"`
		}
		if err := json.Unmarshal(body, &c); err != nil || (c.OpPolls != nil && *c.OpPolls < 0) || (c.PageSize != nil && *c.PageSize < 0) || (c.WaitSteps != nil && *c.WaitSteps < 0) || (c.RoutesQuota != nil && *c.RoutesQuota < 0) {
			writeJSON(w, 400, map[string]string{"error": "want {\"opPolls\": N >= 0, \"waitSteps\": N >= 0, \"pageSize\": N >= 0, \"routesQuota\": N >= 0}"})
			return
		}
		s.mu.Lock()
		if c.RoutesQuota != nil {
			s.routesQuota = *c.RoutesQuota
		}
		if c.OpPolls != nil {
			s.opPolls = *c.OpPolls
		}
		if c.PageSize != nil {
			s.pageSize = *c.PageSize
		}
		if c.WaitSteps != nil {
			s.waitSteps = *c.WaitSteps
		}
		if c.RequireIssuedTokens != nil {
			s.requireIssued = *c.RequireIssuedTokens
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "POST /_fake/instances":
		var seeds []instanceSeed
		if err := json.Unmarshal(body, &seeds); err != nil {
			writeJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		for _, in := range seeds {
			key := meta.ZonalKey(in.Name, in.Zone)
			obj := &computega.Instance{
				Kind: "compute#instance", Name: in.Name, Status: "RUNNING", CanIpForward: true,
				Zone: selfBase + "projects/" + in.Project + "/zones/" + in.Zone,
			}
			if err := s.gce.Instances().Insert(context.Background(), key, obj); err != nil {
				writeJSON(w, 409, map[string]string{"error": err.Error()})
				return
			}
			// MockGCE stamps its own project into selfLink; the API reports the instance's.
			obj.SelfLink = selfBase + "projects/" + in.Project + "/zones/" + in.Zone + "/instances/" + in.Name
		}
		w.WriteHeader(http.StatusNoContent)
	case "POST /_fake/service-accounts":
		if err := s.addServiceAccounts(body); err != nil {
			writeJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case "DELETE /_fake/instances":
		var seeds []instanceSeed
		if err := json.Unmarshal(body, &seeds); err != nil {
			writeJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		for _, in := range seeds {
			_ = s.gce.Instances().Delete(context.Background(), meta.ZonalKey(in.Name, in.Zone))
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, 404, map[string]string{"error": "unknown control endpoint " + r.Method + " " + r.URL.Path})
	}
}
