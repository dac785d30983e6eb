package search

import (
	"cmp"
	"math"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// Bounds on a query: the bytes read (up to the last space before the
// limit, so that no word is cut) and the distinct terms searched; the rest
// is ignored. A term costs one posting-list walk per synonym.
const (
	MaxQueryBytes = 512
	MaxQueryTerms = 32
)

// Bonuses, multiplied into the BM25F score.
const (
	// allTermsBonus: the tool matches every term of a query of two or more
	// (a synonym counts).
	allTermsBonus = 1.3
	// phraseBonus: the tool's name or summary holds the query's terms in
	// order, next to each other ("merge a pull request" in "Merge a pull
	// request").
	phraseBonus = 1.2
)

// Hit is one tool found and its score: higher is better. Scores compare
// only within one search.
type Hit struct {
	Tool  *toolgen.Tool
	Score float64
}

// Search returns the tools that match query, best first, at most limit of
// them (limit ≤ 0: all that match). Equal scores keep the order the tools
// were given to New. A query with no words but stopwords, or that matches
// nothing, returns nil.
func (ix *Index) Search(query string, limit int) []Hit {
	q := parseQuery(query)
	if len(q.groups) == 0 || len(ix.docs) == 0 {
		return nil
	}
	n := len(ix.docs)
	scores := make([]float64, n)
	matched := make([]uint32, n) // bit g: the tool matched query term g
	best := make([]float64, n)   // the best alternative of the current term
	var touched []int32
	for g, alts := range q.groups {
		touched = touched[:0]
		for _, alt := range alts {
			ps := ix.postings[alt.term]
			if len(ps) == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n-len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				tf := float64(p.tf)
				s := alt.weight * idf * tf / (k1 + tf)
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				best[p.doc] = max(best[p.doc], s)
			}
		}
		for _, d := range touched {
			scores[d] += best[d]
			matched[d] |= 1 << g
			best[d] = 0
		}
	}
	all := uint32(1)<<len(q.groups) - 1
	var top ranking
	if limit > 0 {
		top.limit = limit
	}
	for d, s := range scores {
		if s == 0 {
			continue
		}
		doc := &ix.docs[d]
		// The phrase's terms are the query's own, so only a tool that
		// matched every term can hold it.
		if matched[d] == all && len(q.groups) > 1 {
			s *= allTermsBonus
			if len(q.phrase) > 1 && (contains(doc.name, q.phrase) || contains(doc.summary, q.phrase)) {
				s *= phraseBonus
			}
		}
		if b, ok := q.methods[doc.method]; ok {
			s *= b
		}
		top.add(scored{int32(d), s})
	}
	found := top.sorted()
	if len(found) == 0 {
		return nil
	}
	hits := make([]Hit, len(found))
	for i, f := range found {
		hits[i] = Hit{Tool: ix.docs[f.doc].tool, Score: f.score}
	}
	return hits
}

type scored struct {
	doc   int32
	score float64
}

// before is the order of hits: higher score first, then document order.
func before(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(a.doc, b.doc)
}

// ranking keeps the best limit hits (all when limit is 0). With a limit it
// holds them sorted and inserts each better one, which for a small limit
// over a thousand hits is much cheaper than sorting them all.
type ranking struct {
	limit int
	hits  []scored
}

func (r *ranking) add(h scored) {
	if r.limit == 0 {
		r.hits = append(r.hits, h)
		return
	}
	if len(r.hits) == r.limit && before(h, r.hits[len(r.hits)-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(r.hits, h, before)
	if len(r.hits) == r.limit {
		r.hits = r.hits[:len(r.hits)-1]
	}
	r.hits = slices.Insert(r.hits, i, h)
}

func (r *ranking) sorted() []scored {
	if r.limit == 0 {
		slices.SortFunc(r.hits, before)
	}
	return r.hits
}

// query is a parsed query: per distinct term, the terms that match it
// (itself first, at weight 1, then its synonyms); its terms in order, for
// the phrase bonus; and the boost of each HTTP method its verbs fit.
type query struct {
	groups  [][]synonym
	phrase  []string
	methods map[string]float64
}

func parseQuery(s string) query {
	s = clip(s, MaxQueryBytes)
	var q query
	seen := map[string]bool{}
	for _, t := range terms(nil, s) {
		if seen[t] {
			q.phrase = append(q.phrase, t)
			continue
		}
		if len(q.groups) == MaxQueryTerms {
			break
		}
		seen[t] = true
		q.phrase = append(q.phrase, t)
		q.groups = append(q.groups, append([]synonym{{t, 1}}, synonyms[t]...))
		for i, m := range verbMethods[t] {
			b := methodBoost
			if i > 0 {
				b = methodBoostSecond
			}
			if q.methods == nil {
				q.methods = map[string]float64{}
			}
			q.methods[m] = max(q.methods[m], b)
		}
	}
	return q
}

// contains reports whether seq holds sub as a contiguous run.
func contains(seq, sub []string) bool {
	for i := 0; i+len(sub) <= len(seq); i++ {
		if slices.Equal(seq[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
