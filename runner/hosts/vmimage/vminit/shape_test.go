//go:build linux

package vminit

import (
	"strings"
	"testing"
)

func TestSharesBecomeQEMUArgsAndTheMountsFile(t *testing.T) {
	drive := Share{Tag: "drvfs", HostDir: "/tmp/d", GuestDir: "/mnt/c", Options: "version=9p2000.L,access=client"}
	npm := Share{Tag: "npm", HostDir: "/var/cache/sandcheck/npm", GuestDir: "/var/cache/sandcheck/npm", ReadOnly: true, Model: "none"}
	args, err := drive.QEMUArgs()
	if err != nil || strings.Join(args, " ") != "-fsdev local,id=fs-drvfs,path=/tmp/d,security_model=mapped-xattr -device virtio-9p-pci,fsdev=fs-drvfs,mount_tag=drvfs" {
		t.Fatalf("drive: %q %v", args, err)
	}
	args, err = npm.QEMUArgs()
	if err != nil || !strings.Contains(args[1], "security_model=none,readonly=on") {
		t.Fatalf("npm: %q %v", args, err)
	}
	f, err := MountsFile([]Share{drive, npm})
	want := "drvfs /mnt/c version=9p2000.L,access=client\nnpm /var/cache/sandcheck/npm " + DefaultShareOptions + ",ro\n"
	if err != nil || string(f) != want {
		t.Fatalf("mounts file:\n%s\nwant:\n%s (%v)", f, want, err)
	}
}

func TestOddSharesAreRefused(t *testing.T) {
	for _, s := range []Share{
		{Tag: "a b", HostDir: "/x", GuestDir: "/y"},
		{Tag: "", HostDir: "/x", GuestDir: "/y"},
		{Tag: "t", HostDir: "/x,y", GuestDir: "/y"},
		{Tag: "t", HostDir: "/x", GuestDir: "y"},
		{Tag: "t", HostDir: "/x", GuestDir: "/my dir"},
		{Tag: "t", HostDir: "/x", GuestDir: "/y", Options: "a b"},
	} {
		if _, err := s.QEMUArgs(); err == nil {
			t.Errorf("%+v accepted", s)
		}
		if _, err := MountsFile([]Share{s}); err == nil {
			t.Errorf("%+v accepted in a mounts file", s)
		}
	}
}

func TestCPUMax(t *testing.T) {
	for budget, want := range map[float64]string{0.25: "25000 100000\n", 1: "100000 100000\n", 1.5: "150000 100000\n"} {
		if got, err := CPUMax(budget); err != nil || string(got) != want {
			t.Errorf("%v: %q %v", budget, got, err)
		}
	}
	for _, bad := range []float64{0, -1, 0.001, 100} {
		if _, err := CPUMax(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
