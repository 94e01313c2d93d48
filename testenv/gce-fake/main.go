// gce-fake serves Google's own Compute Engine mock (MockGCE from
// github.com/GoogleCloudPlatform/k8s-cloud-provider, pkg/cloud) over HTTP on
// loopback as the Compute Engine v1 REST API for routes, instances, zones and
// global operations, with paging, filters, operations that take several polls, error
// bodies as Google documents them, faults on demand, and the token endpoints a
// client meets (the metadata server, OAuth2 for service-account keys, and the
// `token-url` of gce.conf). The cloud-route-controller's gce plug-in is tested
// against it (testenv/README.md).
//
//	gce-fake -listen 127.0.0.1:0 -addr-file /tmp/addr
//
// Control endpoints (no auth): POST /_fake/reset, GET /_fake/state,
// GET /_fake/requests, POST /_fake/faults, GET /_fake/faults, POST /_fake/config,
// POST /_fake/instances, POST /_fake/service-accounts. projects.get reports the ROUTES quota, which
// inserts respect (quota.go; POST /_fake/config {"routesQuota": N} lowers it).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	addrFile := flag.String("addr-file", "", "write the listening address (host:port) to this file")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("gce-fake k8s-cloud-provider/pkg/cloud MockGCE")
		return
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !(host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1") {
		log.Fatalf("gce-fake: -listen must be a loopback address, got %q", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("gce-fake: %v", err)
	}
	addr := ln.Addr().String()
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(addr+"\n"), 0o644); err != nil {
			log.Fatalf("gce-fake: %v", err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatalf("gce-fake: %v", err)
		}
	}
	srv := &http.Server{Handler: newServer("http://" + addr), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Printf("gce-fake listening on http://%s\n", addr)
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatalf("gce-fake: %v", err)
	}
}
