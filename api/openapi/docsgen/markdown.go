package docsgen

import (
	"html/template"
	"regexp"
	"strconv"
	"strings"
)

// markdown renders the CommonMark subset the document's descriptions use:
// paragraphs, "### " headings, "- " lists (continued by indented lines),
// `code`, **bold** and [links](url). Everything is escaped first, so a
// description can never inject markup.
func markdown(src string) template.HTML {
	var out strings.Builder
	var para, item []string
	inList := false
	flushPara := func() {
		if len(para) > 0 {
			out.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	flushItem := func() {
		if len(item) > 0 {
			out.WriteString("<li>" + inline(strings.Join(item, " ")) + "</li>\n")
			item = nil
		}
	}
	closeList := func() {
		flushItem()
		if inList {
			out.WriteString("</ul>\n")
			inList = false
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(src), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flushPara()
			closeList()
		case strings.HasPrefix(trimmed, "### "):
			flushPara()
			closeList()
			out.WriteString("<h4>" + inline(strings.TrimPrefix(trimmed, "### ")) + "</h4>\n")
		case strings.HasPrefix(line, "- "):
			flushPara()
			flushItem()
			if !inList {
				out.WriteString("<ul>\n")
				inList = true
			}
			item = append(item, strings.TrimPrefix(line, "- "))
		case inList && strings.HasPrefix(line, "  "):
			item = append(item, trimmed)
		default:
			closeList()
			para = append(para, trimmed)
		}
	}
	flushPara()
	closeList()
	return template.HTML(out.String())
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	bold     = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	link     = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
	// codeMark stands for a code span while the other rules run, so that
	// they leave code alone (HTML escaping keeps \x01 and \x02).
	codeMark = regexp.MustCompile("\x01([0-9]+)\x02")
)

// inline renders one paragraph's inline markup, escaping everything else.
func inline(s string) string {
	var codes []string
	s = codeSpan.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+template.HTMLEscapeString(m[1:len(m)-1])+"</code>")
		return "\x01" + strconv.Itoa(len(codes)-1) + "\x02"
	})
	s = template.HTMLEscapeString(s)
	s = bold.ReplaceAllString(s, "<strong>$1</strong>")
	s = link.ReplaceAllStringFunc(s, func(m string) string {
		p := link.FindStringSubmatch(m)
		href := p[2]
		if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "#") {
			return m
		}
		return `<a href="` + href + `">` + p[1] + "</a>"
	})
	return codeMark.ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(m[1 : len(m)-1])
		return codes[i]
	})
}
