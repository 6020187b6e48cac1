package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestJudge(t *testing.T) {
	refused := fmt.Errorf("%w: 1 voting member(s)", ErrRefused)
	for _, c := range []struct {
		err         error
		interrupted bool
		ok          bool
		want        Outcome
	}{
		{nil, false, true, Done},
		{nil, false, false, Changed},
		{context.Canceled, true, true, Interrupted},
		{refused, true, false, Interrupted}, // the user's Ctrl-C comes first
		{refused, false, true, Refused},
		{errors.New("start m3: exit 1"), false, true, Failed},
		{errors.New("start m3: exit 1"), false, false, Failed},
	} {
		if got := Judge(c.err, c.interrupted, c.ok); got != c.want {
			t.Errorf("Judge(%v, %v, %v) = %v, want %v", c.err, c.interrupted, c.ok, got, c.want)
		}
	}
}

func TestFillFor(t *testing.T) {
	f, err := FillFor("/r/", 1<<20, 0, "")
	if err != nil || len(f.Prefixes) != 1 || f.Prefixes[0].ValueBytes != DefaultFillValueBytes || f.Bytes() < 1<<20-4096 || f.Bytes() > 1<<20+4096 {
		t.Errorf("FillFor 1MiB = %+v, %v", f, err)
	}
	if f, err := FillFor("/r/", 0, 0, ""); err != nil || len(f.Prefixes) != 0 {
		t.Errorf("no fill = %+v, %v", f, err)
	}
	bad := filepath.Join(t.TempDir(), "shape.json")
	if err := os.WriteFile(bad, []byte(`{"prefixes": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "none.json")} {
		if _, err := FillFor("/r/", 0, 0, path); err == nil {
			t.Errorf("--shape %s accepted", path)
		}
	}
}

// TestNewLoadBadInput: a load that cannot be built is the user's input
// (ErrLoadConfig), and its clients are closed.
func TestNewLoadBadInput(t *testing.T) {
	var dialed []*clientv3.Client
	dial := func() (*clientv3.Client, error) {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}})
		if err == nil {
			dialed = append(dialed, c)
		}
		return c, err
	}
	for _, c := range []LoadConfig{
		{Dial: dial, Conns: 2, Workers: 1, Profile: "no-such-profile", Prefix: "/p/"},
		{Dial: dial, Conns: 1, Workers: 1, ValSize: 2 << 20, Prefix: "/p/"},
	} {
		if _, _, err := NewLoad(c); !errors.Is(err, ErrLoadConfig) {
			t.Errorf("NewLoad(%+v) = %v, want ErrLoadConfig", c, err)
		}
	}
	if len(dialed) != 3 {
		t.Fatalf("dialed %d clients, want 3", len(dialed))
	}
	for _, c := range dialed {
		if c.Ctx().Err() == nil {
			t.Error("a client of a refused load is still open")
		}
	}
	if _, _, err := NewLoad(LoadConfig{Dial: func() (*clientv3.Client, error) { return nil, errors.New("refused") }, Conns: 1}); err == nil || errors.Is(err, ErrLoadConfig) {
		t.Errorf("a failed dial: %v, want an error that is not the user's input", err)
	}
}

func TestParseCandidate(t *testing.T) {
	c, err := ParseCandidate("m4=http://10.0.0.4:2380,http://10.0.0.4:2379")
	if err != nil || c != (Candidate{Name: "m4", PeerURL: "http://10.0.0.4:2380", ClientURL: "http://10.0.0.4:2379"}) {
		t.Errorf("ParseCandidate = %+v, %v", c, err)
	}
	for _, s := range []string{"", "m4", "m4=http://p", "=http://p,http://c", "m4=,http://c", "m4=http://p,"} {
		if _, err := ParseCandidate(s); err == nil {
			t.Errorf("ParseCandidate(%q) accepted", s)
		}
	}
}
