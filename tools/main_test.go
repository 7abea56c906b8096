package tools

import (
	"os"
	"testing"
)

// jsTestWorkerEnv makes the test binary act as the JavaScript worker: the
// tests' JSTool starts this executable with it set (see jsTool).
const jsTestWorkerEnv = "FIDO_TEST_JS_WORKER"

// testProtectEnv makes the test binary report ProtectProcess's effect.
const testProtectEnv = "FIDO_TEST_PROTECT"

func TestMain(m *testing.M) {
	if os.Getenv(jsTestWorkerEnv) == "1" {
		os.Exit(RunJSWorker(os.Stdin, os.Stdout))
	}
	if os.Getenv(testProtectEnv) == "1" {
		os.Exit(protectedChild())
	}
	// As the host does: processes escaping bash_exec commands come back here.
	_ = BecomeSubreaper()
	os.Exit(m.Run())
}

// testJSWorker points tool at this test binary as its worker.
func testJSWorker(tb testing.TB, tool *JSTool) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	tool.worker = jsWorkerSpec{path: exe, args: []string{"-test.run=^$"}, env: []string{jsTestWorkerEnv + "=1"}}
}
