// azure-fake serves Microsoft's generated fake servers for Microsoft.Network
// route tables and routes (armnetwork/v9/fake) over HTTP on loopback, with
// state, ETags, throttling and other faults on demand, long-running operations
// that take more than one poll, and a managed-identity token endpoint. The
// cloud-route-controller's azure plug-in is tested against it (testenv/README.md).
//
//	azure-fake -listen 127.0.0.1:0 -addr-file /tmp/addr
//
// Control endpoints (no auth): POST /_fake/reset, GET /_fake/state,
// GET /_fake/requests, POST /_fake/faults, GET /_fake/faults, POST /_fake/config
// ({"lroPolls": N, "maxRoutes": N}: a table PUT beyond maxRoutes is refused, limit.go).
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
		fmt.Println("azure-fake armnetwork/v9")
		return
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !(host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1") {
		log.Fatalf("azure-fake: -listen must be a loopback address, got %q", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("azure-fake: %v", err)
	}
	addr := ln.Addr().String()
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(addr+"\n"), 0o644); err != nil {
			log.Fatalf("azure-fake: %v", err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatalf("azure-fake: %v", err)
		}
	}
	srv := &http.Server{Handler: newServer(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Printf("azure-fake listening on http://%s\n", addr)
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatalf("azure-fake: %v", err)
	}
}
