package prompts

import (
	"text/template"
	"text/template/parse"
)

// undeclaredField returns the first argument name the template reads from
// its data ({{.x}}, {{$.x}}) that is not in declared, or "". A typo would
// otherwise render as "" on every get. Inside range and with, dot is not
// the data, so only $ is checked there; templates the text defines are
// not checked (their dot is what the caller passes).
func undeclaredField(t *template.Template, declared map[string]int) string {
	if t.Tree == nil {
		return ""
	}
	bad := ""
	check := func(name string) {
		if _, ok := declared[name]; !ok && bad == "" {
			bad = name
		}
	}
	var walk func(n parse.Node, dotIsData bool)
	walk = func(n parse.Node, dotIsData bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c, dotIsData)
			}
		case *parse.ActionNode:
			walk(n.Pipe, dotIsData)
		case *parse.IfNode:
			walk(n.Pipe, dotIsData)
			walk(n.List, dotIsData)
			walk(n.ElseList, dotIsData)
		case *parse.RangeNode:
			walk(n.Pipe, dotIsData)
			walk(n.List, false)
			walk(n.ElseList, dotIsData)
		case *parse.WithNode:
			walk(n.Pipe, dotIsData)
			walk(n.List, false)
			walk(n.ElseList, dotIsData)
		case *parse.TemplateNode:
			if n.Pipe != nil {
				walk(n.Pipe, dotIsData)
			}
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c, dotIsData)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a, dotIsData)
			}
		case *parse.ChainNode:
			walk(n.Node, dotIsData)
		case *parse.FieldNode:
			if dotIsData {
				check(n.Ident[0])
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				check(n.Ident[1])
			}
		}
	}
	walk(t.Tree.Root, true)
	return bad
}
