//go:build linux

package initramfs

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The kernel modules a boot loads, found in an unpacked kernel with their dependencies.

// Module is a kernel module to load at boot.
type Module struct {
	Name string
	data []byte // the uncompressed .ko
}

// ResolveModules finds the wanted modules and their dependencies (read from each .ko's
// .modinfo "depends="), in load order. Modules built into the kernel are skipped and returned
// apart. Compressed modules (.ko.xz, .ko.zst, .ko.gz) are decompressed here, so the guest's
// busybox insmod needs no decompressor.
func ResolveModules(ctx context.Context, modDir string, want []string) ([]Module, []string, error) {
	norm := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
	files := map[string]string{}
	filepath.Walk(filepath.Join(modDir, "kernel"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			base := filepath.Base(p)
			if i := strings.Index(base, ".ko"); i > 0 {
				files[norm(base[:i])] = p
			}
		}
		return nil
	})
	builtinList, _ := os.ReadFile(filepath.Join(modDir, "modules.builtin"))
	builtin := map[string]bool{}
	for _, l := range strings.Fields(string(builtinList)) {
		base := filepath.Base(l)
		builtin[norm(strings.TrimSuffix(base, ".ko"))] = true
	}
	var order []Module
	var builtins []string
	done := map[string]bool{}
	var visit func(name string, stack []string) error
	visit = func(name string, stack []string) error {
		name = norm(name)
		if done[name] {
			return nil
		}
		done[name] = true
		if builtin[name] {
			if wanted(want, name) {
				builtins = append(builtins, name)
			}
			return nil
		}
		p, ok := files[name]
		if !ok {
			return fmt.Errorf("module %s (needed by %v) is neither built in nor in %s", name, stack, modDir)
		}
		data, err := readModule(ctx, p)
		if err != nil {
			return err
		}
		deps, soft := modDepends(data)
		for _, d := range deps {
			if err := visit(d, append(stack, name)); err != nil {
				return err
			}
		}
		for _, d := range soft { // "softdep=pre: x": load x first when it is a module of its own
			if _, ok := files[norm(d)]; ok {
				if err := visit(d, append(stack, name)); err != nil {
					return err
				}
			}
		}
		order = append(order, Module{Name: name, data: data})
		return nil
	}
	for _, w := range want {
		alts := strings.Split(w, "|")
		w = alts[0]
		for _, a := range alts {
			if _, ok := files[norm(a)]; ok || builtin[norm(a)] {
				w = a
				break
			}
		}
		if err := visit(w, nil); err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(builtins)
	return order, builtins, nil
}

// wanted says whether name is one of the wanted modules (or one of an entry's alternatives).
func wanted(want []string, name string) bool {
	for _, w := range want {
		for _, a := range strings.Split(w, "|") {
			if strings.ReplaceAll(a, "-", "_") == name {
				return true
			}
		}
	}
	return false
}

func readModule(ctx context.Context, p string) ([]byte, error) {
	var tool []string
	switch {
	case strings.HasSuffix(p, ".ko"):
		return os.ReadFile(p)
	case strings.HasSuffix(p, ".xz"):
		tool = []string{"xz", "-dc", p}
	case strings.HasSuffix(p, ".zst"):
		tool = []string{"zstd", "-dcq", p}
	case strings.HasSuffix(p, ".gz"):
		tool = []string{"gzip", "-dc", p}
	default:
		return nil, fmt.Errorf("module %s: unknown compression", p)
	}
	out, err := exec.CommandContext(ctx, tool[0], tool[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(tool, " "), err)
	}
	return out, nil
}

// modDepends reads "depends=" and the "pre:" part of "softdep=" from a module's .modinfo.
func modDepends(ko []byte) (deps, softPre []string) {
	f, err := elf.NewFile(bytes.NewReader(ko))
	if err != nil {
		return nil, nil
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, nil
	}
	data, err := s.Data()
	if err != nil {
		return nil, nil
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			for _, d := range strings.Split(string(v), ",") {
				if d != "" {
					deps = append(deps, d)
				}
			}
		}
		if v, ok := bytes.CutPrefix(kv, []byte("softdep=")); ok {
			f := strings.Fields(string(v))
			for i := 0; i < len(f); i++ {
				if f[i] != "pre:" {
					continue
				}
				for i++; i < len(f) && !strings.HasSuffix(f[i], ":"); i++ {
					softPre = append(softPre, f[i])
				}
				i--
			}
		}
	}
	return deps, softPre
}
