// Package search ranks generated tools for a plain-language query ("merge a
// pull request"), for the gateway's search tool mode, where an API has too
// many operations to list them all as tools. New builds an Index once per
// tool set; Index.Search returns the best tools first.
//
// # Ranking
//
// The score is BM25F over the fields of each tool, each with its weight and
// length normalisation (index.go): the name and operationId split into words
// (camelCase, snake_case, kebab-case, slashes), the summary, the tags, the
// path's literal segments, the path's {param} words (light), the first 300
// bytes of the description (light) and the argument names (light). Query
// and fields are cut into words the same way: lower case, a short English
// stopword list dropped, a light deterministic stemmer (plural -s, -es,
// -ies; -ing, -ed, -ied; a final e), and a few abbreviations folded to one
// form (repository → repo, organization → org, PR → pull request). Each
// query word also matches its synonyms from a small generic table
// (delete/remove, create/add/new, update/edit/modify, get/fetch/retrieve,
// list/all, ...) at a discount, the best of them counting once.
//
// Three multipliers follow: a tool that matches every query word, one whose
// name or summary holds the query's words as a contiguous phrase, and one
// whose HTTP method fits a verb of the query (list/get → GET, create/add →
// POST, delete/remove → DELETE, update/edit → PATCH or PUT). Ties keep the
// order the tools were given in. The tables are in vocab.go.
//
// A query is cut to MaxQueryBytes and its first MaxQueryTerms distinct words,
// so a search costs at most that many posting-list walks.
//
// It imports toolgen and the standard library only; never toolgen/call or
// anything under gateway.
package search
