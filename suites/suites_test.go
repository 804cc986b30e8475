package suites

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/suites/probe"
)

// TestMain lets the test binary double as the in-sandbox probe.
func TestMain(m *testing.M) {
	probe.MaybeRun()
	m.Run()
}

func TestSuites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "sandcheck")
}
