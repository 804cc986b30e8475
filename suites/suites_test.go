package suites

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// TestMain lets the test binary double as the in-sandbox probe.
func TestMain(m *testing.M) {
	probe.MaybeRun()
	m.Run()
}

func TestSuites(t *testing.T) {
	skip.Short(t, "every spec against the real sandbox, about 45 s")
	RegisterFailHandler(Fail)
	RunSpecs(t, "sandcheck")
}
