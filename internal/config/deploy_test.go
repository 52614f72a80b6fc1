package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The deployment files can set every variable the service reads: each is in
// compose's environment and in the Kubernetes manifests (the ConfigMap, the
// Secret or a Deployment), or named there as left out on purpose. The
// variables are those Load asks for, on a production configuration that
// reaches every branch (the RTR registry, a replica).
func TestDeployFilesNameEveryVariable(t *testing.T) {
	asked := map[string]bool{}
	values := prod(map[string]string{"DOMAIND_REGISTRY": "rtr", "DOMAIND_RTR_API_KEY": "k", "DOMAIND_RTR_CUSTOMER": "c",
		"DOMAIND_DATABASE_REPLICA_URL": "postgres://u:p@replica:5432/domaind"})
	if _, err := Load(func(name string) string { asked[name] = true; return values[name] }, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("Load reads %d variables", len(asked))
	if len(asked) < 30 {
		t.Fatalf("Load asked for %d variables; the test no longer sees them all", len(asked))
	}
	read := func(paths ...string) string {
		var all strings.Builder
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			all.Write(b)
		}
		return all.String()
	}
	manifests, err := filepath.Glob("../../deploy/k8s/*.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("the Kubernetes manifests: %v", err)
	}
	for where, text := range map[string]string{"deploy/compose.yaml": read("../../deploy/compose.yaml"), "deploy/k8s": read(manifests...)} {
		var missing []string
		for name := range asked {
			if !strings.Contains(text, name) {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("%s does not name %v", where, missing)
		}
	}
}

// The secrets the deploy examples ship are refused as they are: each
// DOMAIND_ value of deploy/.env.example and of the example Secret, put in
// a production configuration alone, fails Load naming its variable.
func TestDeployExamplesSecretsAreRefused(t *testing.T) {
	line := regexp.MustCompile(`(?m)^\s*#?\s*(DOMAIND_[A-Z_]+)\s*[:=]\s*"?([^"\s]+)"?\s*$`)
	checked := 0
	for _, path := range []string{"../../deploy/.env.example", "../../deploy/k8s/secret.example.yaml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range line.FindAllStringSubmatch(string(b), -1) {
			name, value := m[1], m[2]
			if !slices.Contains(credentialVars, name) {
				continue
			}
			checked++
			_, err := Load(envOf(t, prod(map[string]string{name: value})), false)
			var ce *Error
			if !errors.As(err, &ce) || ce.Var != name {
				t.Errorf("%s: %s=%s loads (err %v); want it refused", path, name, value, err)
			}
		}
	}
	if checked < 6 {
		t.Fatalf("checked %d example values; the pattern no longer finds them", checked)
	}
}
