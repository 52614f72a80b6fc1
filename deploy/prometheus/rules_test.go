// Package prometheus_test checks the Prometheus configuration shipped in
// deploy/prometheus with promtool: the scrape configuration's syntax, the
// alert rules, and their unit tests (alerts_test.yml).
package prometheus_test

import (
	"os/exec"
	"testing"

	"github.com/domaind/domaind/internal/testtool"
)

func TestPrometheusConfiguration(t *testing.T) {
	t.Parallel()
	promtool := testtool.Path(t, "promtool checks the alert rules and runs their unit tests (Debian's prometheus package)", "promtool")
	for _, args := range [][]string{
		{"check", "config", "--syntax-only", "prometheus.yml"}, // its secrets' files exist only in a deployment
		{"check", "rules", "alerts.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
