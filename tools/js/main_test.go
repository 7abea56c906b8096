package js

import (
	"os"
	"testing"
)

// jsTestWorkerEnv makes the test binary act as the JavaScript worker: the
// tests' Tool starts this executable with it set (see jsTool).
const jsTestWorkerEnv = "FIDO_TEST_JS_WORKER"

// The test binary is a worker either way: with jsTestWorkerEnv (testJSWorker)
// or, for a Tool left on its default worker, as `<exe> js-worker`, which
// would otherwise run the whole suite again in every worker it starts.
func TestMain(m *testing.M) {
	if os.Getenv(jsTestWorkerEnv) == "1" || len(os.Args) > 1 && os.Args[1] == WorkerCommand {
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
