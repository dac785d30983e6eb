package openapi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/internal/specs"
)

// The benchmarks below time the loader's JSON lexing on GitHub's REST
// description (13 MB) phase by phase; BenchmarkLoadGitHub (corpus_test.go)
// times the whole load, of which the lexing is a small part. They were
// written to decide whether the loader could lex with internal/jsonlex.

func githubJSON(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(specs.Dir(b), "github-api.github.com.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkSplitGitHub is the serial part of the split decode: the
// top-level read, the components' shallow read and the cutting of every big
// map into chunks, which skips every member's value.
func BenchmarkSplitGitHub(b *testing.B) {
	data := githubJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := scanJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, dv := range d.deferred {
			if dv.key == "components" {
				p := jsonParser{data: data}
				p.resume(dv.at)
				_, maps, err := p.shallowObject(dv.depth, func(key string) bool { _, ok := componentMaps[key]; return ok })
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range maps {
					cs, err := d.chunks(m.at, m.depth)
					if err != nil {
						b.Fatal(err)
					}
					n += len(cs)
				}
				continue
			}
			cs, err := d.chunks(dv.at, dv.depth)
			if err != nil {
				b.Fatal(err)
			}
			n += len(cs)
		}
		if n == 0 {
			b.Fatal("no chunks")
		}
	}
}

// BenchmarkNodeGitHub reads the whole document into nodes on one core: the
// strict reader, strings included, that the chunks run in parallel.
func BenchmarkNodeGitHub(b *testing.B) {
	data := githubJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonNode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSkipGitHub skips the whole document as one value: the lexer
// alone, without the chunking around it.
func BenchmarkSkipGitHub(b *testing.B) {
	data := githubJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := jsonParser{data: data}
		if err := p.skipValue(); err != nil || p.pos != len(data)-1 && p.pos != len(data) {
			b.Fatal(err, p.pos, len(data))
		}
	}
}
