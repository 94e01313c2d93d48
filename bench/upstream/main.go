// Command upstream runs the upstream route controller from
// k8s.io/cloud-provider against a kubeconfig and an instrumented in-memory
// cloud, as the performance peer of the TypeScript controller (shared
// TESTENV.md section 8). It prints JSON lines on stdout:
//
//	{"t":<unix ms>,"list":n,"create":n,"delete":n,"routes":n,...}   every --report-interval and at exit
//	{"created":{"<cidr>":<unix ms>,...}}                              at exit
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/cloud-provider/controllers/route"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	_ "k8s.io/controller-manager/pkg/features/register"
	"k8s.io/klog/v2"
)

const gateName = "CloudControllerManagerWatchBasedRoutesReconciliation"

type preloadRoute struct {
	CIDR string `json:"cidr"`
	Node string `json:"node"`
	Hint string `json:"hint"`
}

func typesNodeName(s string) types.NodeName { return types.NodeName(s) }

type options struct {
	kubeconfig, context, clusterName, clusterCIDR, klogFile, preload string
	watch                                                            bool
	resync, syncPeriod, latency, failCreatesFor, reportInterval      time.Duration
	writeRate                                                        float64
	writeBurst                                                       int
	qps                                                              float64
	burst                                                            int
	volatileCreates                                                  bool
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the controller's user (required)")
	flag.StringVar(&o.context, "context", "", "kubeconfig context (default: current)")
	flag.BoolVar(&o.watch, "watch", false, "feature gate "+gateName)
	flag.StringVar(&o.clusterCIDR, "cluster-cidr", "10.0.0.0/8", "comma-separated cluster CIDRs")
	flag.StringVar(&o.clusterName, "cluster-name", "kubernetes", "cluster name")
	flag.DurationVar(&o.resync, "resync", 12*time.Hour, "informer resync period")
	flag.DurationVar(&o.syncPeriod, "sync-period", 10*time.Second, "route reconciliation period (gate off)")
	flag.DurationVar(&o.latency, "latency", 0, "latency of every cloud call")
	flag.Float64Var(&o.writeRate, "write-rate", 0, "cloud-side create/delete limit per second (0: none)")
	flag.IntVar(&o.writeBurst, "write-burst", 0, "token bucket capacity of --write-rate (default 2x rate)")
	flag.DurationVar(&o.failCreatesFor, "fail-creates-for", 0, "every create fails (HTTP 503) for this long from start")
	flag.DurationVar(&o.reportInterval, "report-interval", time.Second, "interval of the JSON counter lines")
	flag.StringVar(&o.klogFile, "klog-file", "", "klog output file (default: discard)")
	flag.StringVar(&o.preload, "preload", "", "JSON file [{cidr,node,hint}] of routes already in the cloud")
	flag.BoolVar(&o.volatileCreates, "volatile-creates", false, "successful creates are not stored")
	flag.Float64Var(&o.qps, "kube-api-qps", 20, "client QPS (CCM default 20)")
	flag.IntVar(&o.burst, "kube-api-burst", 30, "client burst (CCM default 30)")
	flag.Parse()
	if o.writeBurst == 0 {
		o.writeBurst = int(2 * o.writeRate)
	}
	return o
}

func setupKlog(file string) {
	fs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(fs)
	if file == "" {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	_ = fs.Set("log_file", file)
	_ = fs.Set("one_output", "true")
}

func main() {
	o := parseFlags()
	setupKlog(o.klogFile)
	defer klog.Flush()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		klog.Flush()
		os.Exit(1)
	}
}

func run(o options) error {
	if o.kubeconfig == "" {
		return fmt.Errorf("--kubeconfig is required")
	}
	var cidrs []*net.IPNet
	for _, s := range strings.Split(o.clusterCIDR, ",") {
		_, n, err := net.ParseCIDR(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--cluster-cidr: %w", err)
		}
		cidrs = append(cidrs, n)
	}
	// route.New and Run read the gate, so it must be set before New.
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{gateName: o.watch}); err != nil {
		return fmt.Errorf("feature gate: %w", err)
	}

	loading := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading,
		&clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// As the CCM configures its client (cloud-provider config defaults, component-base content type).
	cfg.QPS = float32(o.qps)
	cfg.Burst = o.burst
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "routebench-upstream"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	cloud := newMemoryRoutes(o.latency, o.writeRate, o.writeBurst, o.failCreatesFor)
	cloud.volatile = o.volatileCreates
	if o.preload != "" {
		data, err := os.ReadFile(o.preload)
		if err != nil {
			return err
		}
		var pre []preloadRoute
		if err := json.Unmarshal(data, &pre); err != nil {
			return fmt.Errorf("--preload: %w", err)
		}
		cloud.preload(o.clusterName, pre)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	f := informers.NewSharedInformerFactory(client, o.resync)
	rc, err := route.New(cloud, client, f.Core().V1().Nodes(), o.clusterName, cidrs)
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	go rc.Run(ctx, o.syncPeriod, controllersmetrics.NewControllerManagerMetrics("routebench"))

	out := bufio.NewWriter(os.Stdout)
	start := time.Now()
	report := func() {
		writeJSON(out, counters(cloud, start))
		_ = out.Flush()
	}
	ticker := time.NewTicker(o.reportInterval)
	defer ticker.Stop()
	report()
	for {
		select {
		case <-ctx.Done():
			report()
			writeJSON(out, map[string]any{"created": cloud.createdSnapshot()})
			_ = out.Flush()
			f.Shutdown()
			return nil
		case <-ticker.C:
			report()
		}
	}
}

func counters(m *memoryRoutes, start time.Time) map[string]any {
	cpu := cpuMillis()
	return map[string]any{
		"t":         time.Now().UnixMilli(),
		"list":      m.list.Load(),
		"create":    m.create.Load(),
		"delete":    m.del.Load(),
		"routes":    m.size(),
		"createOk":  m.createOK.Load(),
		"createErr": m.createErr.Load(),
		"throttled": m.throttled.Load(),
		"uptimeMs":  time.Since(start).Milliseconds(),
		"cpuMs":     cpu,
		"rssKB":     rssKB(),
	}
}

func writeJSON(w *bufio.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = w.Write(append(b, '\n'))
}

func cpuMillis() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return (ru.Utime.Nano() + ru.Stime.Nano()) / 1e6
}

// rssKB reads VmRSS, the measure the TypeScript side reports as process RSS.
func rssKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d", &kb)
			return kb
		}
	}
	return -1
}
