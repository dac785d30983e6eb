package search

import (
	"slices"
	"strings"
)

// The tables below are generic to REST APIs, not to one of them: words
// that every API uses for its operations and resources. They are written
// as plain words; the maps the ranker reads hold their stemmed forms.

// stopwords carry no meaning in a query or a summary.
var stopwords = set(
	"a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "with",
	"from", "into", "onto", "about", "and", "or", "is", "are", "be", "been",
	"was", "were", "has", "have", "this", "that", "these", "those", "it",
	"its", "as", "if", "so", "then", "there", "their", "them", "they", "i",
	"me", "my", "we", "us", "our", "you", "your", "can", "could", "do",
	"does", "how", "what", "which", "who", "please", "want", "would",
	"should", "will", "some", "any", "via", "during",
)

// aliases fold abbreviations and spellings of one word into one term, in
// the index and in queries alike.
var aliases = stemKeys(map[string][]string{
	"repository":    {"repo"},
	"organization":  {"org"},
	"organisation":  {"org"},
	"pr":            {"pull", "request"},
	"configuration": {"config"},
	"application":   {"app"},
	"environment":   {"env"},
	"information":   {"info"},
	"identifier":    {"id"},
	"statistic":     {"stat"},
})

// Synonym weights: a query word matches its synonyms at this fraction of
// an exact match.
const (
	strongSynonym = 0.7
	weakSynonym   = 0.3
)

// synonymGroups are words one might say for another. Each word of a group
// matches every other at the group's weight; a word in two groups takes
// the higher weight.
var synonymGroups = []struct {
	weight float64
	words  []string
}{
	{strongSynonym, []string{"delete", "remove", "destroy", "erase"}},
	{strongSynonym, []string{"create", "add", "new", "make", "insert", "post"}},
	{strongSynonym, []string{"update", "edit", "modify", "change", "patch"}},
	{strongSynonym, []string{"set", "replace", "update"}},
	{strongSynonym, []string{"get", "fetch", "retrieve", "show", "read", "view"}},
	{strongSynonym, []string{"list", "all", "enumerate"}},
	{weakSynonym, []string{"list", "get"}},
	{strongSynonym, []string{"search", "find", "query", "lookup"}},
	{strongSynonym, []string{"user", "account"}},
	{strongSynonym, []string{"enable", "activate"}},
	{strongSynonym, []string{"disable", "deactivate"}},
	{weakSynonym, []string{"team", "group"}},
}

// synonyms maps a term to the other terms it matches and their weights.
var synonyms = buildSynonyms()

// Method boosts: a tool whose HTTP method fits a verb of the query scores
// this much more; the second method of a verb fits less well (adding is
// mostly POST, sometimes PUT: "add a collaborator").
const (
	methodBoost       = 1.15
	methodBoostSecond = 1.05
)

// verbMethods are the HTTP methods each verb usually means, the likelier
// first.
var verbMethods = stemKeys(map[string][]string{
	"list": {"GET"}, "get": {"GET"}, "fetch": {"GET"}, "retrieve": {"GET"},
	"show": {"GET"}, "read": {"GET"}, "view": {"GET"}, "search": {"GET"},
	"find": {"GET"}, "download": {"GET"},
	"create": {"POST", "PUT"}, "add": {"POST", "PUT"}, "new": {"POST", "PUT"},
	"make": {"POST", "PUT"}, "insert": {"POST", "PUT"}, "upload": {"POST", "PUT"},
	"delete": {"DELETE"}, "remove": {"DELETE"}, "destroy": {"DELETE"}, "erase": {"DELETE"},
	"update": {"PATCH", "PUT"}, "edit": {"PATCH", "PUT"}, "modify": {"PATCH", "PUT"},
	"change": {"PATCH", "PUT"}, "patch": {"PATCH"},
	"set": {"PUT", "PATCH"}, "replace": {"PUT"},
})

type synonym struct {
	term   string
	weight float64
}

func buildSynonyms() map[string][]synonym {
	weights := map[string]map[string]float64{}
	for _, g := range synonymGroups {
		for _, a := range g.words {
			ta := normalize(a)
			for _, b := range g.words {
				if tb := normalize(b); tb != ta {
					if weights[ta] == nil {
						weights[ta] = map[string]float64{}
					}
					weights[ta][tb] = max(weights[ta][tb], g.weight)
				}
			}
		}
	}
	out := make(map[string][]synonym, len(weights))
	for t, ws := range weights {
		syns := make([]synonym, 0, len(ws))
		for s, w := range ws {
			syns = append(syns, synonym{s, w})
		}
		slices.SortFunc(syns, func(a, b synonym) int { return strings.Compare(a.term, b.term) })
		out[t] = syns
	}
	return out
}

// normalize is the one term a table word stands for.
func normalize(w string) string {
	st := stem(w)
	if a, ok := aliases[st]; ok && len(a) == 1 {
		return a[0]
	}
	return st
}

func stemKeys[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[stem(k)] = v
	}
	return out
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
