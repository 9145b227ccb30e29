package memory

import "strings"

// Intro is the sentence that opens the rendered block (agentloop's own
// words).
const Intro = "The user keeps standing instructions for this work in the CLAUDE.md memory files below. " +
	"Follow them as you would the user's own words, unless the user asks otherwise in this conversation. " +
	"Each file is introduced by its absolute path and where it comes from; a file brought in by an @import follows the file that imports it."

// Render returns the files as one <system-reminder> block: Intro, then
// for each file a line "Contents of <path> (<kind description>):" and its
// text. It returns "" when there are no files.
func Render(files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<system-reminder>\n")
	b.WriteString(Intro)
	for _, f := range files {
		b.WriteString("\n\nContents of ")
		b.WriteString(f.Path)
		b.WriteString(" (")
		b.WriteString(f.Kind.Description())
		b.WriteString("):\n\n")
		b.WriteString(strings.TrimRight(f.Text, " \t\r\n"))
	}
	b.WriteString("\n</system-reminder>")
	return b.String()
}
