package matrix

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// Cells expands the matrix into cells: targets × versions × hosts × users × faults, in file
// order (target-major, versions oldest first), so the same file always gives the same cells in
// the same order, whatever machine expands it. A target without versions: has one version, ""
// (its pinned install); resolve the others first (ResolveVersions).
func (m *Matrix) Cells() []model.Cell {
	cells := make([]model.Cell, 0, len(m.Targets)*len(m.Hosts)*len(m.Faults))
	for _, t := range m.Targets {
		for _, v := range t.VersionsOf() {
			for _, h := range m.Hosts {
				for _, u := range hostUsers(h) {
					for _, f := range m.Faults {
						cells = append(cells, model.Cell{
							ID:      VersionedCellID(t.ID, v, HostAs(h.Name, u), f, m.Scenarios),
							Target:  t.ID,
							Version: v,
							Host:    h.Name,
							User:    u,
							Fault:   f,
							Labels:  m.Scenarios,
						})
					}
				}
			}
		}
	}
	return cells
}

// HostAs is the host part of a cell's ID: the host's name, and the user when it is not root.
// Every trial ran as root before the user axis existed, so root's cells keep the IDs they had
// and journals and baselines from then still match them; any other user is a new cell.
func HostAs(host, user string) string {
	if user == model.UserRoot || user == "" {
		return host
	}
	return host + "@" + user
}

func hostUsers(h Host) []string {
	if len(h.Users) == 0 {
		return []string{model.UserDefault}
	}
	return h.Users
}

// VersionedCellID is CellID for a target at a chosen version: the slug reads target@version and
// the version is hashed in. Without a version it is CellID, so cells of the pinned install keep
// their IDs (and their baselines) from before versions existed.
func VersionedCellID(target, version, host, fault, labels string) string {
	if version == "" {
		return CellID(target, host, fault, labels)
	}
	return CellID(target+"@"+version, host, fault, labels)
}

// CellID is a readable slug (target.host.fault) plus a short hash of every field that defines the
// cell, labels included. Settings are left out on purpose: a new sandbox version is the same cell,
// which is what lets a nightly run compare with its baseline.
func CellID(target, host, fault, labels string) string {
	fault = NormalizeFault(fault)
	sum := sha256.Sum256([]byte(strings.Join([]string{target, host, fault, strings.TrimSpace(labels)}, "\x00")))
	f := fault
	if f == "" {
		f = "healthy"
	}
	slug := slugify(target + "." + host + "." + f)
	if len(slug) > 48 {
		slug = strings.TrimRight(slug[:48], ".-")
	}
	return slug + "-" + hex.EncodeToString(sum[:4])
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_':
			b.WriteRune(r)
			dash = false
		default:
			if !dash {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return b.String()
}

// Shard is a deterministic slice of the cells, for spreading one matrix over CI machines: shard
// I of N (1-based) takes the cells whose index in Cells order is I-1 mod N. The zero Shard is
// everything.
type Shard struct{ I, N int }

// ParseShard reads "i/n" with 1 <= i <= n; "" is the whole matrix.
func ParseShard(s string) (Shard, error) {
	if strings.TrimSpace(s) == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: expected i/n, e.g. 1/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: expected 1 <= i <= n", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string {
	if s.N == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Select returns the cells of this shard, in their original order.
func (s Shard) Select(cells []model.Cell) []model.Cell {
	if s.N <= 1 {
		return cells
	}
	var out []model.Cell
	for k, c := range cells {
		if k%s.N == s.I-1 {
			out = append(out, c)
		}
	}
	return out
}
