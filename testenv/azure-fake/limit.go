package main

// Routes per route table: Azure allows 1,000 user-defined routes in one route table (its
// networking limits) and refuses a table PUT that would hold more. Its documentation does not
// name that error's code; the fake answers 400 RouteTableRouteLimitExceeded, which the plug-in
// reads as quota_exceeded like any code matching (Quota|Limit)(Exceeded|Reached), as it would the
// real one. POST /_fake/config {"maxRoutes": N} lowers the limit for tests.

import (
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
)

const defaultMaxRoutes = 1000

// routeLimit refuses a table with more routes than the limit; s.mu is held.
func (s *state) routeLimit(name string, t *armnetwork.RouteTable) *armError {
	limit := s.maxRoutes
	if limit <= 0 {
		limit = defaultMaxRoutes
	}
	if t.Properties == nil || len(t.Properties.Routes) <= limit {
		return nil
	}
	return &armError{
		status: 400,
		code:   "RouteTableRouteLimitExceeded",
		message: fmt.Sprintf("Route table %s would have %d routes; a route table can have at most %d routes.",
			name, len(t.Properties.Routes), limit),
	}
}
