package diag

import "strings"

// Doc extracts an analyzer's documentation from its package's doc.go text:
// the section under the heading "# Analyzer NAME", whose first line is
// "NAME: summary". The result is what analysis.Analyzer.Doc holds (summary
// line, blank line, details).
func Doc(docGo, name string) string {
	start := strings.Index(docGo, "# Analyzer "+name+"\n")
	if start < 0 {
		panic("diag.Doc: no '# Analyzer " + name + "' heading")
	}
	var lines []string
	for _, line := range strings.Split(docGo[start:], "\n")[1:] {
		if strings.HasPrefix(line, "package ") {
			break
		}
		line = strings.TrimPrefix(line, "//")
		line = strings.TrimPrefix(line, " ")
		if strings.HasPrefix(line, "# ") {
			break
		}
		lines = append(lines, line)
	}
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	return strings.TrimSpace(strings.TrimPrefix(text, name+":"))
}
