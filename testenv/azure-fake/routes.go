package main

// fake.RoutesServer: single routes of a table. Every write replaces the route
// inside its table and bumps the table's ETag, as a PUT of one route does in
// Microsoft.Network, so a whole-table writer holding the old ETag gets 412.

import (
	"context"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9/fake"
)

func findRoute(t *armnetwork.RouteTable, name string) int {
	if t.Properties == nil {
		return -1
	}
	for i, r := range t.Properties.Routes {
		if strings.EqualFold(*r.Name, name) {
			return i
		}
	}
	return -1
}

// upsertRoute writes one route into an existing table (caller holds s.mu).
func (s *state) upsertRoute(sub, rg string, t *armnetwork.RouteTable, route armnetwork.Route) {
	next := clone(t)
	if next.Properties == nil {
		next.Properties = &armnetwork.RouteTablePropertiesFormat{}
	}
	if i := findRoute(&next, *route.Name); i >= 0 {
		route.Name = next.Properties.Routes[i].Name
		next.Properties.Routes[i] = &route
	} else {
		next.Properties.Routes = append(next.Properties.Routes, &route)
	}
	s.stamp(sub, rg, &next, armnetwork.ProvisioningStateSucceeded)
	*t = next
}

// foreignWrite is a route another writer puts into a table: the concurrent
// change of a conflict test (adapter.go applies it just before a faulted PUT).
func (s *state) foreignWrite(sub, rg, table string, route armnetwork.Route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tables[tableKey(sub, rg, table)]; t != nil {
		s.upsertRoute(sub, rg, t, route)
	}
}

func (s *state) routesServer() fake.RoutesServer {
	return fake.RoutesServer{
		Get: func(ctx context.Context, rg, table, name string, _ *armnetwork.RoutesClientGetOptions) (azfake.Responder[armnetwork.RoutesClientGetResponse], azfake.ErrorResponder) {
			s.mu.Lock()
			defer s.mu.Unlock()
			var resp azfake.Responder[armnetwork.RoutesClientGetResponse]
			var errResp azfake.ErrorResponder
			t, e := s.getTable(ctx, rg, table)
			if e != nil {
				errResp.SetError(e)
				return resp, errResp
			}
			i := findRoute(t, name)
			if i < 0 {
				errResp.SetError(notFound("routeTables/"+table+"/routes", name, rg))
				return resp, errResp
			}
			c := clone(t)
			resp.SetResponse(http.StatusOK, armnetwork.RoutesClientGetResponse{Route: *c.Properties.Routes[i]}, nil)
			return resp, errResp
		},
		NewListPager: func(rg, table string, _ *armnetwork.RoutesClientListOptions) azfake.PagerResponder[armnetwork.RoutesClientListResponse] {
			s.mu.Lock()
			defer s.mu.Unlock()
			var p azfake.PagerResponder[armnetwork.RoutesClientListResponse]
			var page armnetwork.RoutesClientListResponse
			// The pager callback gets no context: look the table up in every subscription.
			for _, k := range s.sortedKeys() {
				parts := strings.SplitN(k, "/", 3)
				if strings.EqualFold(parts[1], rg) && strings.EqualFold(parts[2], table) {
					c := clone(s.tables[k])
					if c.Properties != nil {
						page.Value = append(page.Value, c.Properties.Routes...)
					}
				}
			}
			p.AddPage(http.StatusOK, page, nil)
			return p
		},
		BeginCreateOrUpdate: func(ctx context.Context, rg, table, name string, route armnetwork.Route, _ *armnetwork.RoutesClientBeginCreateOrUpdateOptions) (azfake.PollerResponder[armnetwork.RoutesClientCreateOrUpdateResponse], azfake.ErrorResponder) {
			s.mu.Lock()
			defer s.mu.Unlock()
			var errResp azfake.ErrorResponder
			sub := ctxString(ctx, ctxSubscription)
			t, e := s.getTable(ctx, rg, table)
			if e == nil {
				probe := armnetwork.RouteTable{Properties: &armnetwork.RouteTablePropertiesFormat{Routes: []*armnetwork.Route{{Name: to.Ptr(name), Properties: route.Properties}}}}
				e = validate(&probe, false)
			}
			if e != nil {
				errResp.SetError(e)
				return azfake.PollerResponder[armnetwork.RoutesClientCreateOrUpdateResponse]{}, errResp
			}
			status := http.StatusOK
			if findRoute(t, name) < 0 {
				status = http.StatusCreated
			}
			route.Name = to.Ptr(name)
			s.upsertRoute(sub, rg, t, route)
			c := clone(t)
			result := armnetwork.RoutesClientCreateOrUpdateResponse{Route: *c.Properties.Routes[findRoute(&c, name)]}
			return lro(s.lroPolls, status, result), errResp
		},
		BeginDelete: func(ctx context.Context, rg, table, name string, _ *armnetwork.RoutesClientBeginDeleteOptions) (azfake.PollerResponder[armnetwork.RoutesClientDeleteResponse], azfake.ErrorResponder) {
			s.mu.Lock()
			defer s.mu.Unlock()
			sub := ctxString(ctx, ctxSubscription)
			if t, e := s.getTable(ctx, rg, table); e == nil {
				if i := findRoute(t, name); i >= 0 {
					next := clone(t)
					next.Properties.Routes = append(next.Properties.Routes[:i], next.Properties.Routes[i+1:]...)
					s.stamp(sub, rg, &next, armnetwork.ProvisioningStateSucceeded)
					*t = next
				}
			}
			return lro(s.lroPolls, http.StatusOK, armnetwork.RoutesClientDeleteResponse{}), azfake.ErrorResponder{}
		},
	}
}
