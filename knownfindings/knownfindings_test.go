package knownfindings

import "testing"

func TestSRTListLoads(t *testing.T) {
	l, err := SRT()
	if err != nil {
		t.Fatal(err)
	}
	if l.Target != "srt" || len(l.Findings) == 0 {
		t.Fatalf("%+v", l)
	}
	if f, ok := l.Lookup("failclosed/proxy-port-taken"); !ok || f.Outcome != "proxy-dead" || f.Note == "" {
		t.Fatalf("lookup: %+v %v", f, ok)
	}
	if f, ok := l.Lookup("concurrency/shared-workspace/k4"); !ok || !f.Intermittent || !f.Matches("sandbox-failed") || !f.Matches("residue") || f.Matches("correct") {
		t.Fatalf("intermittent finding: %+v", f)
	}
	if _, ok := l.Lookup("network/seed"); ok {
		t.Fatal("network/seed must not be a known finding: healthy srt passes it")
	}
}
