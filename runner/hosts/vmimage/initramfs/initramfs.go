//go:build linux

package initramfs

// The two archives a boot's initramfs is made of: the kernel's (busybox, modules) and each run's.

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/sandcheck/sandcheck/runner/hosts/vmimage/vminit"
)

// WriteBase writes a kernel's initramfs: busybox and the modules (WriteRun adds the rest).
func WriteBase(path string, mods []Module) error {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("busybox not found (apt-get install busybox-static): %w", err)
	}
	if f, err := elf.Open(busybox); err != nil {
		return err
	} else {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				f.Close()
				return fmt.Errorf("%s is dynamically linked: the initramfs needs busybox-static", busybox)
			}
		}
		f.Close()
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	c := NewCPIO(out)
	for _, d := range []string{"bin", "dev", "proc", "sys", "ro", "rw", "newroot", "sc", "sc/modules"} {
		c.Dir(d, 0o755)
	}
	c.File("bin/busybox", 0o755, busybox)
	var order []string
	for i, m := range mods {
		n := fmt.Sprintf("%02d-%s", i, m.Name)
		c.Bytes("sc/modules/"+n+".ko", 0o644, m.data)
		order = append(order, n)
	}
	c.Bytes("sc/modules/order", 0o644, []byte(strings.Join(order, "\n")+"\n"))
	if err := c.Close(); err != nil {
		return err
	}
	return out.Close()
}

// WriteRun writes a run's initramfs: the kernel's (base: busybox, modules) followed by an archive
// holding the init stages and the run's sandcheck binary, so neither needs the kernel's
// initramfs rebuilt. The appended archive keeps its files under their own top-level folders
// (one holding lib/ would replace the merged-/usr lib link of what it is unpacked over).
func WriteRun(dst, base, binary string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	in, err := os.Open(base)
	if err != nil {
		return err
	}
	_, err = out.ReadFrom(in)
	in.Close()
	if err != nil {
		return err
	}
	c := NewCPIO(out)
	c.Bytes("init", 0o755, []byte(vminit.Init))
	c.Dir("sc", 0o755)
	c.Bytes("sc/stage2", 0o755, []byte(vminit.Stage2))
	c.Dir("sandcheck-bin", 0o755)
	c.File("sandcheck-bin/sandcheck", 0o755, binary)
	if err := c.Close(); err != nil {
		return err
	}
	return out.Close()
}
