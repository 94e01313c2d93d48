package main

// An instrumented in-memory cloudprovider.Routes with the semantics of the
// TypeScript MemoryRoutes (src/cloud/memory/memory-routes.ts), so that call
// counts compare like for like: latency first, then injected faults, then the
// write token bucket; listRoutes never reports node addresses
// (EnableNodeAddresses false).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	cloudprovider "k8s.io/cloud-provider"
)

type storedRoute struct {
	name        string
	clusterName string
	targetNode  string
	cidr        string
	blackhole   bool
}

// tokenBucket mirrors src/cloud/memory/token-bucket.ts: starts full, refills
// continuously, a failed take consumes nothing.
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate float64, burst int) *tokenBucket {
	return &tokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

func (b *tokenBucket) take() (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration(math.Ceil((1-b.tokens)/b.rate*1000)) * time.Millisecond
}

type memoryRoutes struct {
	latency       time.Duration
	writeBucket   *tokenBucket
	failCreatesTo time.Time
	// volatile: successful creates are not stored (reconcile-cost mode keeps
	// the same routes missing on every pass).
	volatile bool

	list, create, del             atomic.Int64
	createOK, createErr, deleteOK atomic.Int64
	throttled                     atomic.Int64

	mu      sync.Mutex
	table   map[string]*storedRoute
	created map[string]int64 // canonical CIDR -> unix ms of the first successful create
}

func newMemoryRoutes(latency time.Duration, writeRate float64, writeBurst int, failCreatesFor time.Duration) *memoryRoutes {
	m := &memoryRoutes{
		latency: latency,
		table:   map[string]*storedRoute{},
		created: map[string]int64{},
	}
	if writeRate > 0 {
		m.writeBucket = newTokenBucket(writeRate, writeBurst)
	}
	if failCreatesFor > 0 {
		m.failCreatesTo = time.Now().Add(failCreatesFor)
	}
	return m
}

func canonical(cidr string) (string, bool) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return "", false
	}
	return n.String(), true
}

// preload puts routes into the table as if created earlier by this cluster.
func (m *memoryRoutes) preload(clusterName string, routes []preloadRoute) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range routes {
		key, ok := canonical(r.CIDR)
		if !ok {
			continue
		}
		m.table[key] = &storedRoute{
			name:        fmt.Sprintf("%s-%s-%s", clusterName, r.Hint, key),
			clusterName: clusterName,
			targetNode:  r.Node,
			cidr:        r.CIDR,
		}
	}
}

var errThrottled = errors.New("Request limit exceeded")

func (m *memoryRoutes) enter(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if op == "create" && !m.failCreatesTo.IsZero() && time.Now().Before(m.failCreatesTo) {
		return fmt.Errorf("injected %s failure (HTTP 503)", op)
	}
	if op != "list" && m.writeBucket != nil {
		if ok, _ := m.writeBucket.take(); !ok {
			m.throttled.Add(1)
			return errThrottled
		}
	}
	return nil
}

func (m *memoryRoutes) ListRoutes(ctx context.Context, clusterName string) ([]*cloudprovider.Route, error) {
	m.list.Add(1)
	if err := m.enter(ctx, "list"); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*cloudprovider.Route, 0, len(m.table))
	for _, r := range m.table {
		if r.clusterName != "" && r.clusterName != clusterName {
			continue
		}
		out = append(out, &cloudprovider.Route{
			Name:            r.name,
			TargetNode:      typesNodeName(r.targetNode),
			DestinationCIDR: r.cidr,
			Blackhole:       r.blackhole,
		})
	}
	return out, nil
}

func (m *memoryRoutes) CreateRoute(ctx context.Context, clusterName string, nameHint string, route *cloudprovider.Route) error {
	m.create.Add(1)
	if err := m.enter(ctx, "create"); err != nil {
		m.createErr.Add(1)
		return err
	}
	key, ok := canonical(route.DestinationCIDR)
	if !ok {
		m.createErr.Add(1)
		return fmt.Errorf("invalid destination %s", route.DestinationCIDR)
	}
	m.createOK.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.created[key]; !seen {
		m.created[key] = time.Now().UnixMilli()
	}
	if m.volatile {
		return nil
	}
	if e, ok := m.table[key]; ok && e.targetNode == string(route.TargetNode) && !e.blackhole {
		return nil
	}
	m.table[key] = &storedRoute{
		// Unique per (node, CIDR): the hint alone collides under dual-stack.
		name:        fmt.Sprintf("%s-%s-%s", clusterName, nameHint, key),
		clusterName: clusterName,
		targetNode:  string(route.TargetNode),
		cidr:        route.DestinationCIDR,
	}
	return nil
}

func (m *memoryRoutes) DeleteRoute(ctx context.Context, clusterName string, route *cloudprovider.Route) error {
	m.del.Add(1)
	if err := m.enter(ctx, "delete"); err != nil {
		return err
	}
	m.deleteOK.Add(1)
	key, ok := canonical(route.DestinationCIDR)
	if !ok {
		key = route.DestinationCIDR
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Deleting a missing route succeeds; a route replaced meanwhile is not ours to delete.
	if e, ok := m.table[key]; ok && e.name == route.Name {
		delete(m.table, key)
	}
	return nil
}

func (m *memoryRoutes) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.table)
}

func (m *memoryRoutes) createdSnapshot() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(m.created))
	for k, v := range m.created {
		out[k] = v
	}
	return out
}
