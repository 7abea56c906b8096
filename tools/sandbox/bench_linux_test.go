//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSandboxCost measures what the sandbox adds to one command: the
// helper's start, the policy's compilation and hand-over, the
// restrictions and the supervisor, against a plain `sh -c true` in the
// same run (goal: at most 5 ms added). FIDO_SANDBOX_HELPER names the
// helper binary (make bench-sandbox uses bin/fido); else the test binary.
func BenchmarkSandboxCost(b *testing.B) {
	requireSandbox(b)
	helper := os.Getenv("FIDO_SANDBOX_HELPER")
	if helper == "" {
		helper, _ = os.Executable()
	}
	ws, tmp := b.TempDir(), b.TempDir()
	home, _ := os.UserHomeDir()
	p := Policy{Workspace: ws, TempDir: tmp, Deny: DefaultDeny(home, "", "", os.Getuid() == 0)}
	sh, err := exec.LookPath("sh")
	if err != nil {
		b.Skip("no sh")
	}
	ctx := context.Background()
	run := func(sandboxed bool) time.Duration {
		start := time.Now()
		if sandboxed {
			c, err := CommandWithHelper(ctx, helper, p, sh, "-c", "true")
			if err != nil {
				b.Fatal(err)
			}
			c.Dir = ws
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		} else {
			c := exec.CommandContext(ctx, sh, "-c", "true")
			c.Dir = ws
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	run(true) // the probe and the first start are not counted
	var plain, boxed time.Duration
	b.ResetTimer()
	for range b.N {
		// As between two bash_exec calls, the spare helper started behind
		// the last command is ready (waiting for it is not counted).
		waitForSpare(b, spareKey{helper: helper})
		plain += run(false)
		boxed += run(true)
	}
	b.StopTimer()
	n := float64(b.N)
	plainMs := float64(plain.Microseconds()) / 1000 / n
	boxedMs := float64(boxed.Microseconds()) / 1000 / n
	b.ReportMetric(plainMs, "plain-ms/op")
	b.ReportMetric(boxedMs, "sandboxed-ms/op")
	b.ReportMetric(boxedMs-plainMs, "added-ms/op")
	b.ReportMetric(boxedMs/plainMs, "ratio")
}

// BenchmarkSandboxCostBackToBack is BenchmarkSandboxCost without waiting
// for the spare helper: commands started faster than a helper starts pay
// for starting one.
func BenchmarkSandboxCostBackToBack(b *testing.B) {
	requireSandbox(b)
	helper := os.Getenv("FIDO_SANDBOX_HELPER")
	if helper == "" {
		helper, _ = os.Executable()
	}
	ws, tmp := b.TempDir(), b.TempDir()
	home, _ := os.UserHomeDir()
	p := Policy{Workspace: ws, TempDir: tmp, Deny: DefaultDeny(home, "", "", os.Getuid() == 0)}
	ctx := context.Background()
	c, err := CommandWithHelper(ctx, helper, p, "sh", "-c", "true")
	if err != nil {
		b.Fatal(err)
	}
	_ = c.Run()
	var plain, boxed time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		_ = exec.CommandContext(ctx, "sh", "-c", "true").Run()
		plain += time.Since(start)
		start = time.Now()
		c, err := CommandWithHelper(ctx, helper, p, "sh", "-c", "true")
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		boxed += time.Since(start)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/1000/n, "plain-ms/op")
	b.ReportMetric(float64(boxed.Microseconds())/1000/n, "sandboxed-ms/op")
	b.ReportMetric(float64((boxed-plain).Microseconds())/1000/n, "added-ms/op")
}

// waitForSpare waits until a spare helper for key waits.
func waitForSpare(tb testing.TB, key spareKey) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		spares.Lock()
		ready := spares.ready[key] != nil
		spares.Unlock()
		if ready {
			return
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatal("no spare helper started")
}

// BenchmarkCompile is the host's share: listing the readable roots around
// the hidden paths and building the rules, once per command.
func BenchmarkCompile(b *testing.B) {
	home, _ := os.UserHomeDir()
	p := Policy{Workspace: b.TempDir(), TempDir: b.TempDir(), Deny: DefaultDeny(home, "", "", os.Getuid() == 0)}
	for range b.N {
		if _, err := compile(p, 7, true); err != nil {
			b.Fatal(err)
		}
	}
}
