//go:build linux

package initramfs

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// CPIO writes a newc ("070701") archive, the format the kernel unpacks as an initramfs.
// Archives concatenate: the kernel unpacks each in turn over the same root.
type CPIO struct {
	w   io.Writer
	ino int
	err error
}

// NewCPIO starts an archive on w.
func NewCPIO(w io.Writer) *CPIO { return &CPIO{w: w, ino: 1000} }

func (c *CPIO) header(name string, mode uint32, size int64) {
	if c.err != nil {
		return
	}
	name = strings.TrimPrefix(name, "/")
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, len(name)+1, 0)
	_, c.err = io.WriteString(c.w, hdr+name+"\x00")
	c.pad(len(hdr) + len(name) + 1)
}

func (c *CPIO) pad(n int) {
	if c.err == nil && n%4 != 0 {
		_, c.err = c.w.Write(make([]byte, 4-n%4))
	}
}

// Dir adds a directory.
func (c *CPIO) Dir(name string, perm os.FileMode) { c.header(name, 0o040000|uint32(perm.Perm()), 0) }

// Symlink adds a symbolic link name -> target.
func (c *CPIO) Symlink(name, target string) {
	c.header(name, 0o120000|0o777, int64(len(target)))
	if c.err == nil {
		_, c.err = io.WriteString(c.w, target)
		c.pad(len(target))
	}
}

// Bytes adds a regular file with the given content.
func (c *CPIO) Bytes(name string, perm os.FileMode, data []byte) {
	c.header(name, 0o100000|uint32(perm.Perm()), int64(len(data)))
	if c.err == nil {
		_, c.err = c.w.Write(data)
		c.pad(len(data))
	}
}

// File adds a regular file copied from path on this machine.
func (c *CPIO) File(name string, perm os.FileMode, path string) {
	if c.err != nil {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		c.err = err
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		c.err = err
		return
	}
	c.header(name, 0o100000|uint32(perm.Perm()), st.Size())
	if c.err == nil {
		var n int64
		n, c.err = io.Copy(c.w, f)
		if c.err == nil && n != st.Size() {
			c.err = fmt.Errorf("%s changed while archiving", path)
		}
		c.pad(int(st.Size() % 4))
	}
}

// Close writes the trailer; it returns the first error met.
func (c *CPIO) Close() error {
	c.header("TRAILER!!!", 0, 0)
	return c.err
}
