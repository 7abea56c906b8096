package js

import (
	"os"
	"testing"
)

// jsTestWorkerEnv makes the test binary act as the JavaScript worker: the
// tests' Tool starts this executable with it set (see jsTool).
const jsTestWorkerEnv = "FIDO_TEST_JS_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(jsTestWorkerEnv) == "1" {
		os.Exit(RunWorker(os.Stdin, os.Stdout))
	}
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
