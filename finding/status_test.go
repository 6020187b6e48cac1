package finding

import "testing"

// TestStatusOf: a grade and its status read back as each other; unknown is
// invalid and invalid reads unknown.
func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		sev    Severity
		status Status
	}{{OK, StatusPass}, {Warn, StatusWarn}, {Fail, StatusFail}, {Unknown, StatusInvalid}} {
		if got := StatusOf(c.sev); got != c.status {
			t.Errorf("StatusOf(%s) = %s, want %s", c.sev, got, c.status)
		}
		if got := c.status.Severity(); got != c.sev {
			t.Errorf("%s.Severity() = %s, want %s", c.status, got, c.sev)
		}
	}
}

// TestHardwareGradeSeverity: a shortfall warns, a host that meets its tier is
// ok, and an unknown host is unknown.
func TestHardwareGradeSeverity(t *testing.T) {
	for _, c := range []struct {
		g    HardwareGrade
		want Severity
	}{
		{HardwareGrade{HostTier: "small", WorkloadTier: "small"}, OK},
		{HardwareGrade{HostTier: "small", WorkloadTier: "large", Shortfalls: []string{"2 CPUs where large wants 8"}}, Warn},
		{HardwareGrade{HostTier: "unknown", WorkloadTier: "small"}, Unknown},
	} {
		if got := c.g.Severity(); got != c.want {
			t.Errorf("%+v: severity %s, want %s", c.g, got, c.want)
		}
	}
}
