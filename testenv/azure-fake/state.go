package main

// The fake's memory: route tables keyed case-insensitively (ARM resource names
// are), a strong ETag per table that every write bumps, and the handlers that
// Microsoft's generated fake transports dispatch to (fake.RouteTablesServer and
// fake.RoutesServer). Handlers see the request's If-Match / If-None-Match and
// any injected LRO failure through the request context (see adapter.go).

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9/fake"
)

// armError is an ARM error response: status, the error code of the body and of
// x-ms-error-code, a message, and extra headers (Retry-After). Handlers return
// it through ErrorResponder.SetError; the adapter finds it with errors.As.
type armError struct {
	status  int
	code    string
	message string
	header  http.Header
}

func (e *armError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

type ctxKey int

const (
	ctxIfMatch ctxKey = iota
	ctxIfNoneMatch
	ctxSubscription
	ctxLROError
)

func ctxString(ctx context.Context, k ctxKey) string {
	s, _ := ctx.Value(k).(string)
	return s
}

type state struct {
	mu       sync.Mutex
	tables   map[string]*armnetwork.RouteTable
	etagSeq  int
	lroPolls int // non-terminal responses each PUT/DELETE LRO gives before its result
	// maxRoutes is the routes a table may hold (limit.go); 0 means Azure's 1,000.
	maxRoutes int
}

func newState() *state {
	return &state{tables: map[string]*armnetwork.RouteTable{}, lroPolls: 2}
}

func tableKey(sub, rg, name string) string {
	return strings.ToLower(sub + "/" + rg + "/" + name)
}

func (s *state) nextETag() string {
	s.etagSeq++
	return fmt.Sprintf(`W/"00000000-0000-0000-0000-%012d"`, s.etagSeq)
}

func tableID(sub, rg, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/routeTables/%s", sub, rg, name)
}

// stamp sets the read-only fields ARM fills in: IDs, types, the table's ETag on
// the table and on each route, provisioning states.
func (s *state) stamp(sub, rg string, t *armnetwork.RouteTable, provisioning armnetwork.ProvisioningState) {
	etag := s.nextETag()
	id := tableID(sub, rg, *t.Name)
	t.ID, t.Etag, t.Type = to.Ptr(id), to.Ptr(etag), to.Ptr("Microsoft.Network/routeTables")
	if t.Properties == nil {
		t.Properties = &armnetwork.RouteTablePropertiesFormat{}
	}
	t.Properties.ProvisioningState = to.Ptr(provisioning)
	if t.Properties.ResourceGUID == nil {
		t.Properties.ResourceGUID = to.Ptr(fmt.Sprintf("00000000-0000-0000-0000-%012d", s.etagSeq))
	}
	for _, r := range t.Properties.Routes {
		r.ID, r.Etag = to.Ptr(id+"/routes/"+*r.Name), to.Ptr(etag)
		r.Type = to.Ptr("Microsoft.Network/routeTables/routes")
		if r.Properties == nil {
			r.Properties = &armnetwork.RoutePropertiesFormat{}
		}
		r.Properties.ProvisioningState = to.Ptr(provisioning)
	}
}

// validate applies the checks Microsoft.Network makes on a route table PUT that
// a client of this fake could get wrong.
func validate(t *armnetwork.RouteTable, creating bool) *armError {
	bad := func(code, msg string) *armError { return &armError{status: 400, code: code, message: msg} }
	if creating && (t.Location == nil || *t.Location == "") {
		return bad("LocationRequired", "The location property is required for this definition.")
	}
	if t.Properties == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, r := range t.Properties.Routes {
		if r == nil || r.Name == nil || *r.Name == "" {
			return bad("InvalidRequestFormat", "A route has no name.")
		}
		lower := strings.ToLower(*r.Name)
		if seen[lower] {
			return bad("InvalidRequestFormat", fmt.Sprintf("Route name %s is used more than once in the route table.", *r.Name))
		}
		seen[lower] = true
		p := r.Properties
		if p == nil || p.AddressPrefix == nil {
			return bad("InvalidRequestFormat", fmt.Sprintf("Route %s has no addressPrefix.", *r.Name))
		}
		if _, _, err := net.ParseCIDR(*p.AddressPrefix); err != nil {
			return bad("InvalidAddressPrefixFormat", fmt.Sprintf("Address prefix %s of route %s is not valid.", *p.AddressPrefix, *r.Name))
		}
		if p.NextHopType == nil {
			return bad("InvalidRequestFormat", fmt.Sprintf("Route %s has no nextHopType.", *r.Name))
		}
		if *p.NextHopType == armnetwork.RouteNextHopTypeVirtualAppliance &&
			(p.NextHopIPAddress == nil || net.ParseIP(*p.NextHopIPAddress) == nil) {
			return bad("InvalidRequestFormat", fmt.Sprintf("Route %s with next hop type VirtualAppliance needs a valid nextHopIpAddress.", *r.Name))
		}
	}
	return nil
}

// precondition implements If-Match / If-None-Match against the current table.
func precondition(ctx context.Context, cur *armnetwork.RouteTable) *armError {
	ifMatch, ifNoneMatch := ctxString(ctx, ctxIfMatch), ctxString(ctx, ctxIfNoneMatch)
	failed := &armError{status: http.StatusPreconditionFailed, code: "PreconditionFailed",
		message: "The condition specified using HTTP conditional header(s) is not met."}
	if ifMatch != "" && ifMatch != "*" && (cur == nil || *cur.Etag != ifMatch) {
		return failed
	}
	if ifMatch == "*" && cur == nil {
		return failed
	}
	if ifNoneMatch == "*" && cur != nil {
		return failed
	}
	return nil
}

func notFound(kind, name, rg string) *armError {
	return &armError{status: 404, code: "ResourceNotFound",
		message: fmt.Sprintf("The Resource 'Microsoft.Network/%s/%s' under resource group '%s' was not found.", kind, name, rg)}
}

// lro is the LRO of a write: `polls` non-terminal responses, then the result.
// An injected failure (ctxLROError) is reported by the adapter at the end: the
// generated transport keeps a poller that ended in SetTerminalError in its
// tracker, so the next write to the same path would get that spent poller.
func lro[T any](polls int, status int, result T) azfake.PollerResponder[T] {
	var p azfake.PollerResponder[T]
	for i := 0; i < polls; i++ {
		p.AddNonTerminalResponse(status, nil)
	}
	p.SetTerminalResponse(status, result, nil)
	return p
}

func clone(t *armnetwork.RouteTable) armnetwork.RouteTable {
	c := *t
	if t.Properties != nil {
		props := *t.Properties
		props.Routes = make([]*armnetwork.Route, len(t.Properties.Routes))
		for i, r := range t.Properties.Routes {
			rc := *r
			if r.Properties != nil {
				rp := *r.Properties
				rc.Properties = &rp
			}
			props.Routes[i] = &rc
		}
		c.Properties = &props
	}
	return c
}

func (s *state) putTable(ctx context.Context, rg, name string, body armnetwork.RouteTable) (azfake.PollerResponder[armnetwork.RouteTablesClientCreateOrUpdateResponse], azfake.ErrorResponder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errResp azfake.ErrorResponder
	sub := ctxString(ctx, ctxSubscription)
	key := tableKey(sub, rg, name)
	cur := s.tables[key]
	if e := precondition(ctx, cur); e != nil {
		errResp.SetError(e)
		return azfake.PollerResponder[armnetwork.RouteTablesClientCreateOrUpdateResponse]{}, errResp
	}
	if e := validate(&body, cur == nil); e != nil {
		errResp.SetError(e)
		return azfake.PollerResponder[armnetwork.RouteTablesClientCreateOrUpdateResponse]{}, errResp
	}
	if e := s.routeLimit(name, &body); e != nil {
		errResp.SetError(e)
		return azfake.PollerResponder[armnetwork.RouteTablesClientCreateOrUpdateResponse]{}, errResp
	}
	status := http.StatusOK
	if cur == nil {
		status = http.StatusCreated
	}
	next := clone(&body)
	next.Name = to.Ptr(name)
	if cur != nil {
		// The stored name and location win, as in ARM (names are case-insensitive).
		next.Name, next.Location = cur.Name, cur.Location
		if next.Properties != nil && cur.Properties != nil {
			next.Properties.ResourceGUID = cur.Properties.ResourceGUID
		}
	}
	if ctxString(ctx, ctxLROError) == "" {
		// While the LRO runs, the table reads as Updating (adapter.go marks it Succeeded at the end).
		provisioning := armnetwork.ProvisioningStateSucceeded
		if s.lroPolls > 0 {
			provisioning = armnetwork.ProvisioningStateUpdating
		}
		s.stamp(sub, rg, &next, provisioning)
		s.tables[key] = &next
	}
	result := armnetwork.RouteTablesClientCreateOrUpdateResponse{RouteTable: clone(&next)}
	return lro(s.lroPolls, status, result), errResp
}

func (s *state) getTable(ctx context.Context, rg, name string) (*armnetwork.RouteTable, *armError) {
	t := s.tables[tableKey(ctxString(ctx, ctxSubscription), rg, name)]
	if t == nil {
		return nil, notFound("routeTables", name, rg)
	}
	return t, nil
}

// server wires the state into Microsoft's generated fake servers.
func (s *state) server() *fake.ServerFactory {
	return &fake.ServerFactory{
		RouteTablesServer: fake.RouteTablesServer{
			BeginCreateOrUpdate: func(ctx context.Context, rg, name string, body armnetwork.RouteTable, _ *armnetwork.RouteTablesClientBeginCreateOrUpdateOptions) (azfake.PollerResponder[armnetwork.RouteTablesClientCreateOrUpdateResponse], azfake.ErrorResponder) {
				return s.putTable(ctx, rg, name, body)
			},
			Get: func(ctx context.Context, rg, name string, _ *armnetwork.RouteTablesClientGetOptions) (azfake.Responder[armnetwork.RouteTablesClientGetResponse], azfake.ErrorResponder) {
				s.mu.Lock()
				defer s.mu.Unlock()
				var resp azfake.Responder[armnetwork.RouteTablesClientGetResponse]
				var errResp azfake.ErrorResponder
				t, e := s.getTable(ctx, rg, name)
				if e != nil {
					errResp.SetError(e)
					return resp, errResp
				}
				resp.SetResponse(http.StatusOK, armnetwork.RouteTablesClientGetResponse{RouteTable: clone(t)}, nil)
				return resp, errResp
			},
			BeginDelete: func(ctx context.Context, rg, name string, _ *armnetwork.RouteTablesClientBeginDeleteOptions) (azfake.PollerResponder[armnetwork.RouteTablesClientDeleteResponse], azfake.ErrorResponder) {
				s.mu.Lock()
				defer s.mu.Unlock()
				delete(s.tables, tableKey(ctxString(ctx, ctxSubscription), rg, name))
				return lro(s.lroPolls, http.StatusOK, armnetwork.RouteTablesClientDeleteResponse{}), azfake.ErrorResponder{}
			},
			NewListPager: func(rg string, _ *armnetwork.RouteTablesClientListOptions) azfake.PagerResponder[armnetwork.RouteTablesClientListResponse] {
				s.mu.Lock()
				defer s.mu.Unlock()
				var page armnetwork.RouteTablesClientListResponse
				for _, k := range s.sortedKeys() {
					if parts := strings.SplitN(k, "/", 3); strings.EqualFold(parts[1], rg) {
						t := clone(s.tables[k])
						page.Value = append(page.Value, &t)
					}
				}
				var p azfake.PagerResponder[armnetwork.RouteTablesClientListResponse]
				p.AddPage(http.StatusOK, page, nil)
				return p
			},
		},
		RoutesServer: s.routesServer(),
	}
}

func (s *state) sortedKeys() []string {
	keys := make([]string, 0, len(s.tables))
	for k := range s.tables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// snapshot is the state for the control endpoint, tables by ARM ID.
func (s *state) snapshot() map[string]armnetwork.RouteTable {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]armnetwork.RouteTable{}
	for _, t := range s.tables {
		out[*t.ID] = clone(t)
	}
	return out
}

// markSucceeded ends a table's Updating state when its LRO has finished.
func (s *state) markSucceeded(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[key]
	if t == nil || t.Properties == nil {
		return
	}
	t.Properties.ProvisioningState = to.Ptr(armnetwork.ProvisioningStateSucceeded)
	for _, r := range t.Properties.Routes {
		if r.Properties != nil {
			r.Properties.ProvisioningState = to.Ptr(armnetwork.ProvisioningStateSucceeded)
		}
	}
}

func (s *state) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = map[string]*armnetwork.RouteTable{}
	s.lroPolls = 2
	s.maxRoutes = 0
}
