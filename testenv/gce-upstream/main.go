// Command gce-upstream runs cloud-provider-gcp's own route code (k8s.io/cloud-provider-gcp/providers
// v0.28.2, package gce) against a Compute Engine endpoint such as the GCE fake, so the integration
// tests can check both directions of a migration with that CCM's real ListRoutes and CreateRoute
// rather than a re-implementation of them.
//
//	gce-upstream -cloud-config FILE list CLUSTER
//	gce-upstream -cloud-config FILE create CLUSTER NAMEHINT NODE CIDR
//	gce-upstream -version
//
// The cloud is built the way the CCM builds it (cloudprovider.InitCloudProvider("gce", FILE)),
// so gce.conf's api-endpoint, token-url and token-body apply as they do there, and whatever the
// file leaves out (the local zone, the project) comes from the metadata server at
// GCE_METADATA_HOST, as there. Its route code takes the node name as the instance name and reads
// nothing from the CCM's informers, so none are given. `list` prints ListRoutes as a JSON array
// of {name, targetNode, destinationCIDR, blackhole}.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	// Registers the "gce" provider exactly as the CCM's main package does.
	_ "k8s.io/cloud-provider-gcp/providers/gce"
)

const upstreamModule = "k8s.io/cloud-provider-gcp/providers"

// upstreamVersion is the module version linked in, from the build info, so -version cannot drift from go.mod.
func upstreamVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == upstreamModule {
				return d.Path + " " + d.Version
			}
		}
	}
	return upstreamModule + " (unknown version)"
}

type routeOut struct {
	Name            string `json:"name"`
	TargetNode      string `json:"targetNode"`
	DestinationCIDR string `json:"destinationCIDR"`
	Blackhole       bool   `json:"blackhole"`
}

// usageError is a bad command line (exit 2), as opposed to a failing cloud call (exit 1).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gce-upstream:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("gce-upstream", flag.ContinueOnError)
	cloudConfig := fs.String("cloud-config", "", "the CCM's gce.conf")
	version := fs.Bool("version", false, "print the upstream module version and exit")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *version {
		_, err := fmt.Fprintln(out, upstreamVersion())
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || *cloudConfig == "" {
		return usageError{"usage: gce-upstream -cloud-config FILE list CLUSTER | create CLUSTER NAMEHINT NODE CIDR"}
	}
	isList := rest[0] == "list" && len(rest) == 2
	isCreate := rest[0] == "create" && len(rest) == 5
	if !isList && !isCreate {
		return usageError{fmt.Sprintf("unknown command or wrong arguments: %q", rest)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	routes, err := upstreamRoutes(cloudConfig)
	if err != nil {
		return err
	}
	if isList {
		return list(ctx, routes, rest[1], out)
	}
	route := &cloudprovider.Route{TargetNode: types.NodeName(rest[3]), DestinationCIDR: rest[4]}
	if err := routes.CreateRoute(ctx, rest[1], rest[2], route); err != nil {
		return fmt.Errorf("CreateRoute: %w", err)
	}
	return nil
}

// upstreamRoutes builds the cloud from gce.conf as the CCM does.
func upstreamRoutes(cloudConfig *string) (cloudprovider.Routes, error) {
	cloud, err := cloudprovider.InitCloudProvider("gce", *cloudConfig)
	if err != nil {
		return nil, fmt.Errorf("InitCloudProvider: %w", err)
	}
	if cloud == nil {
		return nil, errors.New("InitCloudProvider returned no cloud")
	}
	routes, ok := cloud.Routes()
	if !ok {
		return nil, errors.New("the gce cloud reports no Routes interface")
	}
	return routes, nil
}

func list(ctx context.Context, routes cloudprovider.Routes, cluster string, out io.Writer) error {
	got, err := routes.ListRoutes(ctx, cluster)
	if err != nil {
		return fmt.Errorf("ListRoutes: %w", err)
	}
	res := make([]routeOut, 0, len(got))
	for _, r := range got {
		res = append(res, routeOut{
			Name:            r.Name,
			TargetNode:      string(r.TargetNode),
			DestinationCIDR: r.DestinationCIDR,
			Blackhole:       r.Blackhole,
		})
	}
	return json.NewEncoder(out).Encode(res)
}
