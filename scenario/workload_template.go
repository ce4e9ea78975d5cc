package scenario

import "strings"

// TemplatePart is a piece of a native workload's template (a path, body,
// header or tag value): literal Text, or a placeholder {Name}.
type TemplatePart struct {
	Text, Name string
}

// ParseTemplate splits a template into its parts. A placeholder is {name}
// with a name of letters, digits, _ and - (not first) and at most one dot;
// "{{" writes "{"; any other brace is literal text, so JSON bodies need no
// escaping.
func ParseTemplate(s string) []TemplatePart {
	var out []TemplatePart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, TemplatePart{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c != '{':
			lit.WriteByte(c)
		case i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		default:
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 || !isPlaceholder(s[i+1:i+1+end]) {
				lit.WriteByte(c)
				continue
			}
			flush()
			out = append(out, TemplatePart{Name: s[i+1 : i+1+end]})
			i += end + 1
		}
	}
	flush()
	return out
}

func isPlaceholder(name string) bool {
	if name == "" || strings.Count(name, ".") > 1 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok || (i == 0 && (c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// Placeholders lists what a template may name with these keys: in tags
// {KEY.class} and {KEY.shard} (the latter for keys with shards), elsewhere
// also {seq}, {seed} and {KEY}.
func Placeholders(keys map[string]*KeyStream, inTags bool) []string {
	var out, names []string
	for _, k := range sortedKeys(keys) {
		if k != "seq" && k != "seed" {
			names = append(names, k)
		}
	}
	if !inTags {
		out = append(out, "seq", "seed")
		out = append(out, names...)
	}
	for _, k := range names {
		out = append(out, k+".class")
		if ks := keys[k]; ks != nil && ks.Shards > 0 {
			out = append(out, k+".shard")
		}
	}
	return out
}
