// Package format writes a schema.Report as every format at once: report.json (the model
// itself), report.md (package markdown), junit.xml (package junit) and report.html (package
// htmlpage), which share their wording (package wording). WriteAll writes the four files into a
// folder, each whole or not at all.
package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/junit"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/format/wording"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Options carry what the journals do not know: how the run was configured and reproduced.
type Options = wording.Options

// Files are the names WriteAll uses.
const (
	JSONFile     = "report.json"
	MarkdownFile = "report.md"
	JUnitFile    = "junit.xml"
	HTMLFile     = "report.html"
)

// WriteJSON writes report.json.
func WriteJSON(w io.Writer, rep *schema.Report) error { return schema.Encode(w, rep) }

// WriteAll writes report.json, report.md, junit.xml and report.html into dir (created if
// missing). Each file is written to a temporary name and renamed, so a reader (or a CI artifact
// upload) never sees half a report.
func WriteAll(dir string, rep *schema.Report, opts Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	opts = withSettings(opts, rep)
	writers := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{JSONFile, func(w io.Writer) error { return WriteJSON(w, rep) }},
		{MarkdownFile, func(w io.Writer) error { return markdown.Write(w, rep, opts) }},
		{JUnitFile, func(w io.Writer) error { return junit.Write(w, rep) }},
		{HTMLFile, func(w io.Writer) error { return htmlpage.Write(w, rep, opts) }},
	}
	for _, wr := range writers {
		if err := writeFile(filepath.Join(dir, wr.name), wr.fn); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, fn func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteMarkdownFrom writes the Markdown report of the run in dir (its report.json) to w, with
// opts: a bug report (`sandcheck repro`) shows the known findings' evidence too.
func WriteMarkdownFrom(w io.Writer, dir string, opts Options) error {
	rep, err := schema.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return err
	}
	opts = withSettings(opts, rep)
	return markdown.Write(w, rep, opts)
}

// withSettings fills opts.Settings from the report's own settings when the caller gave none.
func withSettings(opts Options, rep *schema.Report) Options {
	if opts.Settings == "" && len(rep.Settings) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, rep.Settings, "", "  ") == nil {
			opts.Settings, opts.SettingsOf = b.String(), rep.SettingsOf
		}
	}
	return opts
}
