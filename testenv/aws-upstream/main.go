// Command aws-upstream runs cloud-provider-aws's own route code (k8s.io/cloud-provider-aws
// v1.37.1, pkg/providers/v1) against an EC2 endpoint such as moto, so the integration tests can
// check both directions of a migration with that CCM's real ListRoutes and CreateRoute rather
// than a re-implementation of them.
//
//	aws-upstream -cloud-config FILE -nodes FILE list CLUSTER
//	aws-upstream -cloud-config FILE -nodes FILE create CLUSTER NAMEHINT NODE CIDR
//	aws-upstream -version
//
// The cloud is built the way the CCM builds it (cloudprovider.InitCloudProvider("aws", FILE)),
// so the INI file's [ServiceOverride] sections and the SDK's environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_EC2_METADATA_DISABLED) apply as they do there. The Kubernetes nodes
// the CCM would see through its node informer come from -nodes, a JSON array of
// {"name","providerID"}; upstream maps route targets to nodes only through that informer.
// `list` prints ListRoutes as a JSON array of {name, targetNode, destinationCIDR, blackhole}.
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

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"

	// Registers the "aws" provider exactly as the CCM's main package does.
	_ "k8s.io/cloud-provider-aws/pkg/providers/v1"
)

const upstreamModule = "k8s.io/cloud-provider-aws"

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

type nodeSpec struct {
	Name       string `json:"name"`
	ProviderID string `json:"providerID"`
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
		fmt.Fprintln(os.Stderr, "aws-upstream:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("aws-upstream", flag.ContinueOnError)
	cloudConfig := fs.String("cloud-config", "", "the CCM's INI cloud.conf")
	nodesFile := fs.String("nodes", "", "JSON array of {name, providerID}: the nodes the CCM's informer holds")
	version := fs.Bool("version", false, "print the upstream module version and exit")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *version {
		_, err := fmt.Fprintln(out, upstreamVersion())
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || *cloudConfig == "" || *nodesFile == "" {
		return usageError{"usage: aws-upstream -cloud-config FILE -nodes FILE list CLUSTER | create CLUSTER NAMEHINT NODE CIDR"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	routes, err := upstreamRoutes(ctx, *cloudConfig, *nodesFile)
	if err != nil {
		return err
	}
	switch {
	case rest[0] == "list" && len(rest) == 2:
		return list(ctx, routes, rest[1], out)
	case rest[0] == "create" && len(rest) == 5:
		route := &cloudprovider.Route{TargetNode: types.NodeName(rest[3]), DestinationCIDR: rest[4]}
		return routes.CreateRoute(ctx, rest[1], rest[2], route)
	default:
		return usageError{fmt.Sprintf("unknown command or wrong arguments: %q", rest)}
	}
}

// upstreamRoutes builds the cloud as the CCM does and hands it a synced node informer.
func upstreamRoutes(ctx context.Context, cloudConfig, nodesFile string) (cloudprovider.Routes, error) {
	nodes, err := readNodes(nodesFile)
	if err != nil {
		return nil, err
	}
	cloud, err := cloudprovider.InitCloudProvider("aws", cloudConfig)
	if err != nil {
		return nil, fmt.Errorf("InitCloudProvider: %w", err)
	}
	if cloud == nil {
		return nil, errors.New("InitCloudProvider returned no cloud")
	}
	user, ok := cloud.(cloudprovider.InformerUser)
	if !ok {
		return nil, errors.New("the aws cloud takes no informers")
	}
	client := fake.NewClientset()
	for _, n := range nodes {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}, Spec: v1.NodeSpec{ProviderID: n.ProviderID}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("seeding node %s: %w", n.Name, err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	user.SetInformers(factory)
	factory.Start(ctx.Done())
	for typ, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	routes, ok := cloud.Routes()
	if !ok {
		return nil, errors.New("the aws cloud reports no Routes interface")
	}
	return routes, nil
}

func readNodes(file string) ([]nodeSpec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var nodes []nodeSpec
	if err := json.Unmarshal(data, &nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return nodes, nil
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
	enc := json.NewEncoder(out)
	return enc.Encode(res)
}
