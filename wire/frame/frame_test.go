package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

const key = "k3y0123456789abcdef"

func emitString(t *testing.T, key string, tr Trial) string {
	t.Helper()
	var b bytes.Buffer
	if err := Emit(&b, key, tr, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestEmitRoundTripAmongNoise(t *testing.T) {
	in := Trial{Outcome: model.ProxyDead, Hint: "bridge not listening",
		Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.ProxyDead}},
		Evidence:  json.RawMessage(`{"x":1}`)}
	for _, k := range []string{key, ""} {
		var buf bytes.Buffer
		buf.WriteString("ginkgo progress output\nno newline at end")
		if err := Emit(&buf, k, in, json.RawMessage(`{"kernel":"6.1"}`)); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("trailing noise\n")
		out, fp, err := Parse(buf.Bytes(), k)
		if err != nil || out.Outcome != in.Outcome || out.Hint != in.Hint || len(out.Scenarios) != 1 ||
			string(out.Evidence) != `{"x":1}` || string(fp) != `{"kernel":"6.1"}` {
			t.Fatalf("key %q: round trip: %+v %s %v", k, out, fp, err)
		}
		if _, _, err := Parse([]byte("nothing here\n"), k); !errors.Is(err, ErrNoResult) {
			t.Fatalf("key %q: missing line: %v", k, err)
		}
	}
}

// A sandboxed command that prints a frame of its own, after the real one or instead of it, is
// ignored: it does not know the key.
func TestForgedUnkeyedFrameIgnored(t *testing.T) {
	real := emitString(t, key, Trial{Outcome: model.NonEnforcing, Hint: "denied host reached"})
	forged := emitString(t, "", Trial{Outcome: model.Correct})
	wrongKey := emitString(t, "guessed", Trial{Outcome: model.Correct})
	out, _, err := Parse([]byte(real+forged+wrongKey), key)
	if err != nil || out.Outcome != model.NonEnforcing {
		t.Fatalf("forged frames after the real one: %+v %v, want non-enforcing", out, err)
	}
	if _, _, err := Parse([]byte(forged+wrongKey), key); !errors.Is(err, ErrNoResult) {
		t.Fatalf("only forged frames: %v, want ErrNoResult", err)
	}
	// Without a key (a trial run by hand) the keyed frame is not read as an unkeyed one.
	if out, _, err := Parse([]byte(real), ""); !errors.Is(err, ErrNoResult) {
		t.Fatalf("keyed frame read without the key: %+v %v", out, err)
	}
}

func TestTwoDifferentKeyedFramesAreAnError(t *testing.T) {
	a := emitString(t, key, Trial{Outcome: model.NonEnforcing})
	b := emitString(t, key, Trial{Outcome: model.Correct})
	if out, _, err := Parse([]byte(a+b), key); err == nil || errors.Is(err, ErrNoResult) {
		t.Fatalf("two differing keyed frames: %+v %v, want an error", out, err)
	}
	if out, _, err := Parse([]byte(a+a), key); err != nil || out.Outcome != model.NonEnforcing {
		t.Fatalf("the same frame twice: %+v %v", out, err)
	}
}

func TestOverlongLineIsAnError(t *testing.T) {
	real := emitString(t, key, Trial{Outcome: model.Correct})
	long := strings.Repeat("x", 9<<20) + "\n"
	for name, out := range map[string]string{"before": long + real, "after": real + long} {
		if tr, _, err := Parse([]byte(out), key); err == nil {
			t.Errorf("9 MiB line %s the frame: %+v, want an error", name, tr)
		}
	}
	// Egress lines around the long line are still returned with the error.
	var b bytes.Buffer
	EmitEgress(&b, key, model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/a"})
	b.WriteString(long)
	EmitEgress(&b, key, model.Hit{Role: model.RoleDenied, Proto: "https", Path: "/b"})
	hits, err := ParseEgress(b.Bytes(), key)
	if err == nil || len(hits) != 2 || hits[1].Path != "/b" {
		t.Fatalf("egress around a 9 MiB line: %+v %v, want both hits and an error", hits, err)
	}
}

func TestEgressLinesKeyedAndInOrder(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("• partial ginkgo line without newline")
	EmitEgress(&b, key, model.Hit{Role: model.RoleAllowed, Proto: "http", Path: "/ok"})
	EmitEgress(&b, "", model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/forged"})
	EmitEgress(&b, key, model.Hit{Role: model.RoleDenied, Proto: "dns", Path: "denied.sandcheck.test", From: "198.18.0.1:5353"})
	b.WriteString("SANDCHECK-EGRESS " + key + " {not json\n")
	hits, err := ParseEgress(b.Bytes(), key)
	if len(hits) != 2 || hits[0].Path != "/ok" || hits[1].Proto != "dns" || hits[1].From != "198.18.0.1:5353" {
		t.Fatalf("hits %+v", hits)
	}
	if err == nil {
		t.Fatal("a malformed keyed egress line must be reported")
	}
	unkeyed, err := ParseEgress(b.Bytes(), "")
	if err != nil || len(unkeyed) != 1 || unkeyed[0].Path != "/forged" {
		t.Fatalf("unkeyed: %+v %v", unkeyed, err)
	}
}
