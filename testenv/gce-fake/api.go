package main

// The Compute Engine v1 REST surface for routes, instances and global
// operations, dispatched onto MockGCE. MockGCE keeps the objects and gives
// Google's answers for a duplicate insert (409) and a missing delete or get
// (404); this file adds what the mock does in Go but the API does over HTTP:
// paths, JSON as the API returns it, paging (maxResults, pageToken), list
// filters, the request validation the API does for routes, warnings on routes
// whose next-hop instance is gone, and an operation per write that goes
// PENDING → RUNNING → DONE over several polls.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud"
	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/meta"
	computega "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"
)

const selfBase = "https://www.googleapis.com/compute/v1/"

var (
	routesPath    = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/global/routes(?:/([^/]+))?$`)
	instancePath  = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)$`)
	zonesPath     = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones$`)
	operationPath = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/global/operations/([^/]+?)(/wait)?$`)
	instanceRef   = regexp.MustCompile(`(?:^|/)projects/([^/]+)/zones/([^/]+)/instances/([^/]+)$`)
	shortInstance = regexp.MustCompile(`^zones/([^/]+)/instances/([^/]+)$`)
	resourceName  = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// apiError is an error answer as Google documents it: HTTP status, the
// `error.errors[].reason`, the canonical `error.status`, a message.
type apiError struct {
	code       int
	reason     string
	status     string
	message    string
	retryAfter string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.code, e.reason, e.message) }

func canonicalStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ALREADY_EXISTS"
	case 412:
		return "FAILED_PRECONDITION"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "UNKNOWN"
}

func defaultReason(code int) string {
	switch code {
	case 400:
		return "invalid"
	case 401:
		return "required"
	case 403:
		return "forbidden"
	case 404:
		return "notFound"
	case 409:
		return "alreadyExists"
	case 429:
		return "rateLimitExceeded"
	case 503:
		return "backendError"
	}
	return "backendError"
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	reason, status := e.reason, e.status
	if reason == "" {
		reason = defaultReason(e.code)
	}
	if status == "" {
		status = canonicalStatus(e.code)
	}
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeJSON(w, e.code, map[string]any{"error": map[string]any{
		"code": e.code, "message": e.message, "status": status,
		"errors": []map[string]string{{"message": e.message, "domain": "global", "reason": reason}},
	}})
}

// fromMock turns MockGCE's *googleapi.Error into the API's answer.
func fromMock(err error) *apiError {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return &apiError{code: ge.Code, message: ge.Message}
	}
	return &apiError{code: 500, message: err.Error()}
}

// routeError is MockGCE's answer for a route with the API's wording.
func routeError(err error, project, name string) *apiError {
	e := fromMock(err)
	switch e.code {
	case 404:
		e.message = fmt.Sprintf("The resource 'projects/%s/global/routes/%s' was not found", project, name)
	case 409:
		e.message = fmt.Sprintf("The resource 'projects/%s/global/routes/%s' already exists", project, name)
	}
	return e
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// instanceURL is the full form the API stores for a next-hop instance given in
// any accepted form (full URL, projects/..., zones/...).
func instanceURL(project, ref string) (string, bool) {
	if m := instanceRef.FindStringSubmatch(ref); m != nil {
		return selfBase + "projects/" + m[1] + "/zones/" + m[2] + "/instances/" + m[3], true
	}
	if m := shortInstance.FindStringSubmatch(ref); m != nil {
		return selfBase + "projects/" + project + "/zones/" + m[1] + "/instances/" + m[2], true
	}
	return "", false
}

// validRoute does the checks routes.insert does before it accepts a route.
func validRoute(project string, r *computega.Route) *apiError {
	bad := func(field, why string) *apiError {
		return &apiError{code: 400, reason: "invalid", message: fmt.Sprintf("Invalid value for field 'resource.%s': '%s'. %s", field, fieldValue(r, field), why)}
	}
	if !resourceName.MatchString(r.Name) {
		return bad("name", "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'")
	}
	if ip, network, err := net.ParseCIDR(r.DestRange); err != nil {
		return bad("destRange", "Invalid IPv4 or IPv6 CIDR range.")
	} else if !ip.Equal(network.IP) {
		return bad("destRange", "The destination range must be a network address: its host bits must be zero.")
	}
	if r.Network == "" {
		return &apiError{code: 400, reason: "required", message: "Required field 'resource.network' not specified"}
	}
	hops := 0
	for _, h := range []string{r.NextHopInstance, r.NextHopIp, r.NextHopGateway, r.NextHopIlb, r.NextHopVpnTunnel} {
		if h != "" {
			hops++
		}
	}
	if hops != 1 {
		return &apiError{code: 400, reason: "invalid", message: "Exactly one of nextHopInstance, nextHopIp, nextHopGateway, nextHopIlb, nextHopVpnTunnel must be specified."}
	}
	if r.NextHopInstance != "" {
		full, ok := instanceURL(project, r.NextHopInstance)
		if !ok {
			return bad("nextHopInstance", "The URL is malformed.")
		}
		r.NextHopInstance = full
	}
	return nil
}

func fieldValue(r *computega.Route, field string) string {
	switch field {
	case "name":
		return r.Name
	case "destRange":
		return r.DestRange
	case "nextHopInstance":
		return r.NextHopInstance
	}
	return ""
}

func (s *server) withWarnings(r *computega.Route) *computega.Route {
	out := *r
	out.Warnings = nil
	if m := instanceRef.FindStringSubmatch(r.NextHopInstance); m != nil {
		if _, err := s.gce.Instances().Get(context.Background(), meta.ZonalKey(m[3], m[2])); err != nil {
			out.Warnings = []*computega.RouteWarnings{{
				Code:    "NEXT_HOP_INSTANCE_NOT_FOUND",
				Message: fmt.Sprintf("Next hop instance '%s' does not exist.", r.NextHopInstance),
			}}
		}
	}
	return &out
}

// page is the [start, end) of a list's items that maxResults, pageToken and
// the configured page size select.
func (s *server) page(q url.Values, n int) (int, int, *apiError) {
	max := 500
	if v := q.Get("maxResults"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 0 || m > 500 {
			return 0, 0, &apiError{code: 400, reason: "invalid", message: fmt.Sprintf("Invalid value for field 'maxResults': '%s'. Must be less than or equal to 500", v)}
		}
		if m > 0 {
			max = m
		}
	}
	s.mu.Lock()
	pageSize := s.pageSize
	s.mu.Unlock()
	if pageSize > 0 && pageSize < max {
		max = pageSize
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		m, err := strconv.Atoi(strings.TrimPrefix(tok, "page-"))
		if err != nil || !strings.HasPrefix(tok, "page-") {
			return 0, 0, &apiError{code: 400, reason: "invalid", message: "Invalid value for field 'pageToken': '" + tok + "'."}
		}
		start = m
	}
	start = min(start, n)
	return start, min(start+max, n), nil
}

// zoneSeeds are the zones every project of the fake has: two regions, so a
// test sees a region's zones and not its neighbour's.
var zoneSeeds = []string{"europe-west1-b", "europe-west1-c", "europe-west1-d", "us-central1-a", "us-central1-b"}

func seedZones(gce *cloud.MockGCE) {
	mz := gce.Zones().(*cloud.MockZones)
	for _, z := range zoneSeeds {
		region := z[:strings.LastIndex(z, "-")]
		obj := &computega.Zone{
			Kind: "compute#zone", Name: z, Status: "UP",
			Region:   selfBase + "projects/fake-project/regions/" + region,
			SelfLink: selfBase + "projects/fake-project/zones/" + z,
		}
		mz.Objects[*meta.GlobalKey(z)] = mz.Obj(obj)
	}
}

func (s *server) listZones(w http.ResponseWriter, r *http.Request, project string) *apiError {
	q := r.URL.Query()
	f, err := parseFilter(q.Get("filter"))
	if err != nil {
		return &apiError{code: 400, reason: "invalid", message: err.Error()}
	}
	all, err := s.gce.Zones().List(r.Context(), f)
	if err != nil {
		return fromMock(err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	start, end, perr := s.page(q, len(all))
	if perr != nil {
		return perr
	}
	body := map[string]any{
		"kind": "compute#zoneList", "id": "projects/" + project + "/zones",
		"selfLink": selfBase + "projects/" + project + "/zones",
	}
	if end > start {
		body["items"] = all[start:end]
	}
	if end < len(all) {
		body["nextPageToken"] = fmt.Sprintf("page-%d", end)
	}
	writeJSON(w, 200, body)
	return nil
}

func (s *server) listRoutes(w http.ResponseWriter, r *http.Request, project string) *apiError {
	q := r.URL.Query()
	f, err := parseFilter(q.Get("filter"))
	if err != nil {
		return &apiError{code: 400, reason: "invalid", message: err.Error()}
	}
	all, err := s.gce.Routes().List(r.Context(), f)
	if err != nil {
		return fromMock(err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	start, end, perr := s.page(q, len(all))
	if perr != nil {
		return perr
	}
	items := []*computega.Route{}
	for _, rt := range all[start:end] {
		items = append(items, s.withWarnings(rt))
	}
	body := map[string]any{
		"kind": "compute#routeList", "id": "projects/" + project + "/global/routes",
		"selfLink": selfBase + "projects/" + project + "/global/routes",
	}
	if len(items) > 0 {
		body["items"] = items
	}
	if end < len(all) {
		body["nextPageToken"] = fmt.Sprintf("page-%d", end)
	}
	writeJSON(w, 200, body)
	return nil
}

func (s *server) insertRoute(w http.ResponseWriter, r *http.Request, project string, f *fault) *apiError {
	var rt computega.Route
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&rt); err != nil {
		return &apiError{code: 400, reason: "parseError", message: "Parse Error: " + err.Error()}
	}
	if e := validRoute(project, &rt); e != nil {
		return e
	}
	key := meta.GlobalKey(rt.Name)
	if f != nil && f.OpError != nil {
		// The API accepted the request; the operation will fail and nothing is created.
		writeJSON(w, 200, s.newOperation(project, "insert", selfBase+"projects/"+project+"/global/routes/"+rt.Name, f.OpError))
		return nil
	}
	if quota, err := s.routesQuotaError(r.Context(), key); err != nil {
		return fromMock(err)
	} else if quota != nil {
		// Accepted, then the operation fails and nothing is created (quota.go).
		writeJSON(w, 200, s.newOperation(project, "insert", selfBase+"projects/"+project+"/global/routes/"+rt.Name, quota))
		return nil
	}
	s.mu.Lock()
	s.ids++
	rt.Id = uint64(1000000 + s.ids)
	s.mu.Unlock()
	rt.Kind = "compute#route"
	rt.CreationTimestamp = time.Now().Format(time.RFC3339)
	if rt.Priority == 0 {
		rt.Priority = 1000
	}
	if err := s.gce.Routes().Insert(r.Context(), key, &rt); err != nil {
		return routeError(err, project, rt.Name)
	}
	// MockGCE stamps its router's project; the API reports the request's.
	rt.SelfLink = selfBase + "projects/" + project + "/global/routes/" + rt.Name
	writeJSON(w, 200, s.newOperation(project, "insert", selfBase+"projects/"+project+"/global/routes/"+rt.Name, nil))
	return nil
}

func (s *server) deleteRoute(w http.ResponseWriter, r *http.Request, project, name string, f *fault) *apiError {
	key := meta.GlobalKey(name)
	if f != nil && f.OpError != nil {
		if _, err := s.gce.Routes().Get(r.Context(), key); err != nil {
			return routeError(err, project, name)
		}
		writeJSON(w, 200, s.newOperation(project, "delete", selfBase+"projects/"+project+"/global/routes/"+name, f.OpError))
		return nil
	}
	if err := s.gce.Routes().Delete(r.Context(), key); err != nil {
		return routeError(err, project, name)
	}
	writeJSON(w, 200, s.newOperation(project, "delete", selfBase+"projects/"+project+"/global/routes/"+name, nil))
	return nil
}

func (s *server) getRoute(w http.ResponseWriter, r *http.Request, project, name string) *apiError {
	rt, err := s.gce.Routes().Get(r.Context(), meta.GlobalKey(name))
	if err != nil {
		return routeError(err, project, name)
	}
	writeJSON(w, 200, s.withWarnings(rt))
	return nil
}

func (s *server) getInstance(w http.ResponseWriter, r *http.Request, project, zone, name string) *apiError {
	inst, err := s.gce.Instances().Get(r.Context(), meta.ZonalKey(name, zone))
	if err != nil {
		e := fromMock(err)
		if e.code == 404 {
			e.message = fmt.Sprintf("The resource 'projects/%s/zones/%s/instances/%s' was not found", project, zone, name)
		}
		return e
	}
	writeJSON(w, 200, inst)
	return nil
}
