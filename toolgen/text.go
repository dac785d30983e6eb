package toolgen

// Descriptions as plain text. OpenAPI descriptions are CommonMark, but
// documents (often generated from code comments) carry HTML too: <p>, <br>,
// <b>, <code>, <a href>, &amp;. The model reads a tool's description as
// text, so HTML becomes the Markdown it means and entities are decoded.
//
// Only the HTML is converted; the rest of the text stays exactly as
// written. That is why this is not an HTML-to-text library call: those
// parse the whole description as HTML, so a Markdown description with one
// <br> loses its line breaks and has its Markdown escaped (k3a/html2text
// turns "a\n\n- one\n- two" into "a - one - two"; html-to-markdown v2 turns
// "**all**" into "\*\*all\*\*"), and both drop placeholders written like
// tags, such as GitHub's "refs/heads/<branch>". The tokenizing is
// golang.org/x/net/html's; an unknown element name is text.

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// htmlElements are the elements descriptions use. Any other <word> is text.
var htmlElements = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Fields(`a abbr article b big blockquote br caption center cite code col colgroup
		dd del details dfn div dl dt em figcaption figure font h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark nobr ol
		p pre q s samp section small span strike strong sub summary sup table tbody td tfoot th thead tr tt u ul
		var wbr`) {
		m[name] = true
	}
	return m
}()

// htmlMarkup finds an element of htmlElements (opening, closing or
// self-closing) or an entity reference.
var htmlMarkup = regexp.MustCompile(`(?i)</?([a-z][a-z0-9]*)(\s[^<>]*)?/?>|&(#[0-9]+|#x[0-9a-f]+|[a-z][a-z0-9]*);`)

// hasHTML reports whether s holds markup plainText would change.
func hasHTML(s string) bool {
	for _, m := range htmlMarkup.FindAllStringSubmatch(s, -1) {
		if m[1] == "" || htmlElements[strings.ToLower(m[1])] {
			return true
		}
	}
	return false
}

// plainText turns the HTML in s into Markdown and decodes its entities,
// leaving text without HTML as it is.
func plainText(s string) string {
	if !hasHTML(s) {
		return s
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	var links []string // hrefs of the open <a> elements
	var lists []int    // per open list: 0 for ul, else the next ol number
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			// At the end, a tag left open ("when n<limit") is text.
			b.Write(z.Raw())
			return tidy(b.String())
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			raw := string(z.Raw())
			name, hasAttr := z.TagName()
			tag := string(name)
			if !htmlElements[tag] {
				b.WriteString(raw) // a placeholder such as <branch>
				continue
			}
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			open := tt != html.EndTagToken
			switch tag {
			case "p", "div", "section", "article", "table", "details", "figure", "dl":
				b.WriteString("\n\n")
			case "tr", "caption", "summary", "figcaption", "dt":
				b.WriteString("\n")
			case "td", "th":
				if open {
					b.WriteString(" ")
				}
			case "dd":
				if open {
					b.WriteString("\n  ")
				}
			case "br":
				b.WriteString("\n")
			case "hr":
				b.WriteString("\n\n---\n\n")
			case "h1", "h2", "h3", "h4", "h5", "h6":
				b.WriteString("\n\n")
				if open {
					b.WriteString(strings.Repeat("#", int(tag[1]-'0')) + " ")
				}
			case "ul", "ol":
				if open && tt == html.StartTagToken {
					n := 0
					if tag == "ol" {
						n = 1
					}
					lists = append(lists, n)
				} else if !open && len(lists) > 0 {
					lists = lists[:len(lists)-1]
				}
				b.WriteString("\n")
			case "li":
				if open {
					b.WriteString("\n" + strings.Repeat("  ", max(len(lists)-1, 0)))
					if n := len(lists); n > 0 && lists[n-1] > 0 {
						b.WriteString(strconv.Itoa(lists[n-1]) + ". ")
						lists[n-1]++
					} else {
						b.WriteString("- ")
					}
				}
			case "b", "strong":
				b.WriteString("**")
			case "i", "em", "cite", "dfn", "var":
				b.WriteString("*")
			case "code", "tt", "kbd", "samp":
				b.WriteString("`")
			case "pre":
				if open {
					b.WriteString("\n\n```\n")
				} else {
					b.WriteString("\n```\n\n")
				}
			case "blockquote":
				b.WriteString("\n\n")
				if open {
					b.WriteString("> ")
				}
			case "a":
				switch {
				case open && tt == html.StartTagToken:
					links = append(links, attrs["href"])
					if attrs["href"] != "" {
						b.WriteString("[")
					}
				case !open && len(links) > 0:
					if href := links[len(links)-1]; href != "" {
						b.WriteString("](" + href + ")")
					}
					links = links[:len(links)-1]
				}
			case "img":
				b.WriteString(attrs["alt"])
			case "q":
				b.WriteString(`"`)
			}
		}
	}
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy drops the spaces that end lines and the blank lines beyond one.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = blankLines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	return strings.TrimSpace(s)
}
