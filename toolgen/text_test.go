package toolgen

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		// No HTML: exactly as written, Markdown and placeholders included.
		"Lists **all** repos.\n\nSee [docs](https://x) for `more`.\n\n- one\n- two": "Lists **all** repos.\n\nSee [docs](https://x) for `more`.\n\n- one\n- two",
		"The name of the branch, as refs/heads/<branch>.":                           "The name of the branch, as refs/heads/<branch>.",
		"5 < 6 and x > y & z": "5 < 6 and x > y & z",
		"AT&T":                "AT&T",
		// HTML becomes the Markdown it means; entities are decoded.
		"<p>Returns the <b>pet</b> &amp; its owner.</p><p>Second&nbsp;para<br/>line</p><ul><li>a</li><li>b</li></ul>": "Returns the **pet** & its owner.\n\nSecond\u00a0para\nline\n\n- a\n- b",
		"Mixed: use <code>a &lt; b</code> and <a href=\"https://e.x\">the guide</a>.\n\nNext paragraph.":              "Mixed: use `a < b` and [the guide](https://e.x).\n\nNext paragraph.",
		"Pets &amp; owners":                                    "Pets & owners",
		"Steps:<ol><li>one</li><li>two</li></ol>":              "Steps:\n\n1. one\n2. two",
		"<h2>Notes</h2>Keep refs/heads/<branch> <i>as is</i>.": "## Notes\n\nKeep refs/heads/<branch> *as is*.",
		"Line one<br>line two\n\n- a Markdown list":            "Line one\nline two\n\n- a Markdown list",
		"<pre>x := 1\ny := 2</pre>done":                        "```\nx := 1\ny := 2\n```\n\ndone",
		"<a>no link</a> and <img alt=\"a chart\" src=x>":       "no link and a chart",
		"Use <b>x</b> when n<limit":                            "Use **x** when n<limit",
	} {
		require.Equal(t, want, plainText(in), "%q", in)
	}
}
