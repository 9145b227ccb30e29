package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxProjectKey is the longest project directory name kept whole.
const maxProjectKey = 200

// DefaultConfigDir returns $CLAUDE_CONFIG_DIR, or ~/.claude.
func DefaultConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".claude"
	}
	return filepath.Join(home, ".claude")
}

func configDirOr(d string) string {
	if d == "" {
		return DefaultConfigDir()
	}
	return d
}

// ProjectsDir returns <configDir>/projects; configDir "" is the default.
func ProjectsDir(configDir string) string {
	return filepath.Join(configDirOr(configDir), "projects")
}

// projectNameOK reports whether n can name a project directory as
// CLAUDE_CODE_PROJECT_DIR_NAME: 1–64 characters of [A-Za-z0-9_-]. (A
// loop, not a regular expression: one compiled at start-up costs every
// process, most of which never look.)
func projectNameOK(n string) bool {
	if len(n) == 0 || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ProjectKey returns the name of the project directory of cwd: the absolute
// path with symlinks resolved, every character outside [A-Za-z0-9] replaced
// by "-" ("/home/me/proj" → "-home-me-proj"). Names longer than 200
// characters are cut to 200 and get "-" and a hash of the whole path
// appended.
//
// When both CLAUDE_CONFIG_DIR and CLAUDE_CODE_PROJECT_DIR_NAME are set and
// the latter is 1–64 characters of [A-Za-z0-9_-], it is the key.
func ProjectKey(cwd string) string {
	if os.Getenv("CLAUDE_CONFIG_DIR") != "" {
		if n := os.Getenv("CLAUDE_CODE_PROJECT_DIR_NAME"); projectNameOK(n) {
			return n
		}
	}
	return sanitize(realPath(cwd))
}

// realPath makes p absolute and resolves symlinks where it can.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// sanitize replaces every character outside [A-Za-z0-9] by "-", counting
// characters as UTF-16 code units as the reference does, and shortens long
// results.
func sanitize(p string) string {
	var b strings.Builder
	b.Grow(len(p)) // the usual case (ASCII) in one allocation
	for _, r := range p {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) <= maxProjectKey {
		return s
	}
	return s[:maxProjectKey] + "-" + jsHash(p)
}

// jsHash is the 32-bit string hash the SDKs use for long project names:
// h = h*31 + c over UTF-16 code units, rendered in base 36.
func jsHash(s string) string {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			h = h*31 + int32(0xD800+(r>>10))
			h = h*31 + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = h*31 + int32(r)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return strconv.FormatInt(v, 36)
}

// ProjectDir returns <configDir>/projects/<ProjectKey(cwd)>.
func ProjectDir(configDir, cwd string) string {
	return filepath.Join(ProjectsDir(configDir), ProjectKey(cwd))
}

// Path returns the transcript file of a session of cwd.
func Path(configDir, cwd, sessionID string) string {
	return filepath.Join(ProjectDir(configDir, cwd), sessionID+".jsonl")
}

// validID reports whether id can name a file: letters, digits, "-", "_".
func validID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// projectDirs returns the project directories of cwd: the exact one, and
// for long names every directory sharing the 200-character prefix (the
// reference CLI hashes long names differently). cwd "" returns all.
func projectDirs(configDir, cwd string) ([]string, error) {
	root := ProjectsDir(configDir)
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	key := ""
	if cwd != "" {
		key = ProjectKey(cwd)
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		n := de.Name()
		switch {
		case cwd == "", n == key,
			len(key) > maxProjectKey && strings.HasPrefix(n, key[:maxProjectKey+1]):
			out = append(out, filepath.Join(root, n))
		}
	}
	return out, nil
}

// Find returns the transcript file of a session, searching every project
// directory. When several projects hold the id, the most recently modified
// file wins. It returns an error wrapping [ErrNotFound] when there is none.
func Find(configDir, sessionID string) (string, error) {
	if !validID(sessionID) {
		return "", fmt.Errorf("session: invalid session id %q", sessionID)
	}
	dirs, err := projectDirs(configDir, "")
	if err != nil {
		return "", err
	}
	best := ""
	var bestTime int64
	for _, d := range dirs {
		p := filepath.Join(d, sessionID+".jsonl")
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if t := fi.ModTime().UnixNano(); best == "" || t > bestTime {
			best, bestTime = p, t
		}
	}
	if best == "" {
		return "", fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	return best, nil
}

// SubagentPath returns the transcript file of a subagent of the session
// whose transcript is sessionPath: <dir>/<sessionId>/subagents/agent-<agentId>.jsonl.
func SubagentPath(sessionPath, agentID string) string {
	dir := strings.TrimSuffix(sessionPath, ".jsonl")
	return filepath.Join(dir, "subagents", "agent-"+agentID+".jsonl")
}

// SubagentMeta is the sidecar file beside a subagent's transcript. The
// fields are those the reference CLI writes that agentloop has a value
// for (the reference adds flags about how it picked the model and
// effort); a reader keeps to ToolUseID and ParentAgentID, as the SDKs'
// getSubagentMessages does.
type SubagentMeta struct {
	// AgentType is the subagent's type, e.g. "general-purpose".
	AgentType string `json:"agentType,omitempty"`
	// IsBuiltIn is set for an agent agentloop defines itself
	// (general-purpose), not the caller or a .claude/agents file.
	IsBuiltIn bool `json:"isBuiltIn"`
	// Description is the Agent call's description.
	Description string `json:"description,omitempty"`
	// ToolUseID is the id of the Agent tool_use that started the subagent.
	ToolUseID string `json:"toolUseId"`
	// ParentAgentID is the agent that started it, when that was a subagent.
	ParentAgentID string `json:"parentAgentId,omitempty"`
	// SpawnDepth is 1 for a subagent of the main loop, 2 for one of its
	// subagents, and so on.
	SpawnDepth int `json:"spawnDepth,omitempty"`
	// RequestShape is "foreground" or "background": how the subagent ran.
	RequestShape string `json:"requestShape,omitempty"`
	// Model is the model the subagent ran on.
	Model string `json:"model,omitempty"`
	// Finished is set once the run has ended by itself; a run that was
	// stopped (an interrupt, TaskStop) leaves it unset, as the reference
	// does.
	Finished bool `json:"finished,omitempty"`
}

// metaPath returns the sidecar path of a subagent transcript.
func metaPath(transcriptPath string) string {
	return strings.TrimSuffix(transcriptPath, ".jsonl") + ".meta.json"
}

// WriteSubagentMeta writes the sidecar of the subagent transcript at
// transcriptPath (agent-<id>.meta.json beside agent-<id>.jsonl).
func WriteSubagentMeta(transcriptPath string, meta SubagentMeta) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	p := metaPath(transcriptPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return writeFileAtomic(p, b)
}

// ReadSubagentMeta reads the sidecar of the subagent transcript at
// transcriptPath.
func ReadSubagentMeta(transcriptPath string) (SubagentMeta, error) {
	var m SubagentMeta
	b, err := os.ReadFile(metaPath(transcriptPath))
	if err != nil {
		return m, fmt.Errorf("session: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("session: %s: %w", metaPath(transcriptPath), err)
	}
	return m, nil
}

// ListSubagents returns the agent ids of the subagent transcripts of the
// session whose transcript is sessionPath, searching subagents/
// recursively, sorted.
func ListSubagents(sessionPath string) ([]string, error) {
	root := filepath.Join(strings.TrimSuffix(sessionPath, ".jsonl"), "subagents")
	var ids []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		n := d.Name()
		if !d.IsDir() && strings.HasPrefix(n, "agent-") && strings.HasSuffix(n, ".jsonl") {
			ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(n, "agent-"), ".jsonl"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// writeFileAtomic writes data to a temporary file beside p and renames it
// over p.
func writeFileAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("session: %w", err)
	}
	return nil
}
