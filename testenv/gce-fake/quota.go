package main

// The project's ROUTES quota: projects.get reports it (limit and usage, every route of the
// project counted), and routes.insert beyond it fails its operation with QUOTA_EXCEEDED, as
// Compute Engine does. The limit is Compute Engine's default unless POST /_fake/config sets
// routesQuota.

import (
	"context"
	"fmt"
	"net/http"
	"regexp"

	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/filter"
	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/meta"
)

// defaultRoutesQuota is a new project's ROUTES quota.
const defaultRoutesQuota = 250

var projectPath = regexp.MustCompile(`^/compute/v1/projects/([^/]+)$`)

func (s *server) routesLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.routesQuota > 0 {
		return s.routesQuota
	}
	return defaultRoutesQuota
}

func (s *server) routesUsage(ctx context.Context) (int, error) {
	routes, err := s.gce.Routes().List(ctx, filter.None)
	if err != nil {
		return 0, err
	}
	return len(routes), nil
}

// getProject answers projects.get with the quotas the route controller reads.
func (s *server) getProject(w http.ResponseWriter, r *http.Request, project string) *apiError {
	usage, err := s.routesUsage(r.Context())
	if err != nil {
		return fromMock(err)
	}
	writeJSON(w, 200, map[string]any{
		"kind":     "compute#project",
		"id":       "123456789",
		"name":     project,
		"selfLink": selfBase + "projects/" + project,
		"quotas": []map[string]any{
			{"metric": "NETWORKS", "limit": 15.0, "usage": 1.0},
			{"metric": "ROUTES", "limit": float64(s.routesLimit()), "usage": float64(usage)},
		},
	})
	return nil
}

// routesQuotaError is the operation error of an insert the ROUTES quota has no room for. A
// route of that name already there is left to the insert's own 409.
func (s *server) routesQuotaError(ctx context.Context, key *meta.Key) (*opError, error) {
	if _, err := s.gce.Routes().Get(ctx, key); err == nil {
		return nil, nil
	}
	usage, err := s.routesUsage(ctx)
	if err != nil {
		return nil, err
	}
	limit := s.routesLimit()
	if usage < limit {
		return nil, nil
	}
	return &opError{
		Code:       "QUOTA_EXCEEDED",
		Message:    fmt.Sprintf("Quota 'ROUTES' exceeded.  Limit: %.1f globally.", float64(limit)),
		HTTPStatus: 403,
	}, nil
}
