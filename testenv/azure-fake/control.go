package main

// The fake's other two faces: the managed-identity token endpoint a VM's
// instance metadata service offers, and the control endpoints tests use to
// inject faults and read state (testenv/README.md lists them).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9/fake"
)

// imds answers like the instance metadata service's managed identity endpoint
// (ManagedIdentityCredential reaches it via AZURE_POD_IDENTITY_AUTHORITY_HOST).
func (s *server) imds(w http.ResponseWriter, r *http.Request) {
	entry := logEntry{Method: r.Method, Path: r.URL.Path, API: "imds"}
	rec := &statusRecorder{ResponseWriter: w}
	defer func() { entry.Status = rec.status; s.record(entry) }()
	if r.Header.Get("Metadata") != "true" {
		writeJSON(rec, 400, map[string]string{"error": "invalid_request", "error_description": "Required metadata header not specified"})
		return
	}
	resource := r.URL.Query().Get("resource")
	if resource == "" {
		writeJSON(rec, 400, map[string]string{"error": "invalid_request", "error_description": "Required query variable 'resource' is missing"})
		return
	}
	s.mu.Lock()
	s.tokens++
	n := s.tokens
	s.mu.Unlock()
	now := time.Now().Unix()
	clientID := r.URL.Query().Get("client_id")
	if clientID == "" {
		clientID = "00000000-0000-0000-0000-00000000c1d0"
	}
	writeJSON(rec, 200, map[string]string{
		"access_token": fmt.Sprintf("imds-token-%d", n), "client_id": clientID,
		"expires_in": "3600", "expires_on": fmt.Sprint(now + 3600), "ext_expires_in": "3600",
		"not_before": fmt.Sprint(now), "resource": resource, "token_type": "Bearer",
	})
}

func (s *server) control(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	switch r.Method + " " + r.URL.Path {
	case "POST /_fake/reset":
		s.st.reset()
		s.mu.Lock()
		s.faults, s.log, s.lros = nil, nil, map[string]*lroEntry{}
		s.transport = fake.NewServerFactoryTransport(s.st.server())
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_fake/state":
		writeJSON(w, 200, s.st.snapshot())
	case "GET /_fake/requests":
		s.mu.Lock()
		out := append([]logEntry{}, s.log...)
		s.mu.Unlock()
		writeJSON(w, 200, out)
	case "POST /_fake/faults":
		var fs []*fault
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&fs); err != nil {
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
	case "GET /_fake/faults":
		s.mu.Lock()
		n := len(s.faults)
		s.mu.Unlock()
		writeJSON(w, 200, map[string]int{"pending": n})
	case "POST /_fake/config":
		var c struct {
			LROPolls  *int `json:"lroPolls"`
			MaxRoutes *int `json:"maxRoutes"`
		}
		if err := json.Unmarshal(body, &c); err != nil || (c.LROPolls == nil && c.MaxRoutes == nil) ||
			(c.LROPolls != nil && *c.LROPolls < 0) || (c.MaxRoutes != nil && *c.MaxRoutes < 0) {
			writeJSON(w, 400, map[string]string{"error": "want {\"lroPolls\": N >= 0, \"maxRoutes\": N >= 0}"})
			return
		}
		s.st.mu.Lock()
		if c.LROPolls != nil {
			s.st.lroPolls = *c.LROPolls
		}
		if c.MaxRoutes != nil {
			s.st.maxRoutes = *c.MaxRoutes
		}
		s.st.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, 404, map[string]string{"error": "unknown control endpoint " + r.Method + " " + r.URL.Path})
	}
}
