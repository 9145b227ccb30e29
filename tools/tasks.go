package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/tool"
)

// Task statuses.
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
)

// TaskItem is one entry of a session's task list, as kept in its file
// <Home>/.claude/tasks/<session id>/<id>.json.
type TaskItem struct {
	ID          string `json:"id"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	// ActiveForm is the subject in the present continuous ("Running the
	// tests"), shown while the task is in progress.
	ActiveForm string `json:"activeForm,omitempty"`
	Owner      string `json:"owner,omitempty"`
	Status     string `json:"status"`
	// Blocks lists the tasks that cannot start before this one is done;
	// BlockedBy the tasks this one waits for.
	Blocks    []string       `json:"blocks"`
	BlockedBy []string       `json:"blockedBy"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskListDir returns the directory holding the task list of env's session:
// <Home>/.claude/tasks/<session id>. Characters of the session id that are
// not letters, digits, '.', '_' or '-' are replaced by '-'; an empty id is
// "default".
func TaskListDir(env *tool.Env) (string, error) {
	home := ""
	session := ""
	if env != nil {
		home, session = env.Home, env.SessionID
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the task list: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".claude", "tasks", taskSessionDirName(session)), nil
}

func taskSessionDirName(id string) string {
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '-'
		}
	}
	switch s := string(b); s {
	case "":
		return "default"
	case ".", "..":
		return strings.Repeat("-", len(s))
	default:
		return s
	}
}

// Tasks returns the tasks of env's session, ordered by id.
func Tasks(env *tool.Env) ([]TaskItem, error) {
	s, err := taskStoreOf(env)
	if err != nil {
		return nil, err
	}
	var out []TaskItem
	err = s.locked(func() error {
		var err error
		out, err = s.all()
		return err
	})
	return out, err
}

// taskStore reads and writes one task list directory. Every operation runs
// under a process-wide lock for the directory; files are replaced
// atomically, so readers never see half a file.
type taskStore struct {
	dir string
	mu  *sync.Mutex
}

var taskLocks sync.Map // directory -> *sync.Mutex

func taskStoreOf(env *tool.Env) (*taskStore, error) {
	dir, err := TaskListDir(env)
	if err != nil {
		return nil, err
	}
	mu, _ := taskLocks.LoadOrStore(dir, &sync.Mutex{})
	return &taskStore{dir: dir, mu: mu.(*sync.Mutex)}, nil
}

func (s *taskStore) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn()
}

const taskHighWater = ".highwatermark"

// taskID normalises an id given by the model ("3" or "#3"); ok is false
// for anything that cannot be a task id.
func taskID(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

func (s *taskStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

// load returns the task, or nil when there is none with that id.
func (s *taskStore) load(id string) (*TaskItem, error) {
	data, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t TaskItem
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("task file %s is damaged: %v", s.path(id), err)
	}
	t.ID = id
	taskFill(&t)
	return &t, nil
}

func taskFill(t *TaskItem) {
	if t.Blocks == nil {
		t.Blocks = []string{}
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	if t.Status == "" {
		t.Status = TaskPending
	}
}

// all returns every readable task, ordered by id. Damaged files are
// skipped.
func (s *taskStore) all() ([]TaskItem, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := []TaskItem{}
	for _, n := range ids {
		t, err := s.load(strconv.FormatUint(n, 10))
		if err != nil || t == nil {
			continue
		}
		out = append(out, *t)
	}
	return out, nil
}

// ids lists the ids of the task files, in order.
func (s *taskStore) ids() ([]uint64, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		if id, ok := taskID(name); ok && id == name {
			n, _ := strconv.ParseUint(id, 10, 63)
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// nextID reserves the next id: one more than any id ever given out in the
// directory, so that ids of deleted tasks are not reused.
func (s *taskStore) nextID() (string, error) {
	var high uint64
	if data, err := os.ReadFile(filepath.Join(s.dir, taskHighWater)); err == nil {
		high, _ = strconv.ParseUint(strings.TrimSpace(string(data)), 10, 63)
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	if len(ids) > 0 {
		high = max(high, ids[len(ids)-1])
	}
	id := strconv.FormatUint(high+1, 10)
	if err := s.write(taskHighWater, []byte(id+"\n")); err != nil {
		return "", err
	}
	return id, nil
}

func (s *taskStore) save(t *TaskItem) error {
	taskFill(t)
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return s.write(t.ID+".json", append(data, '\n'))
}

func (s *taskStore) remove(id string) error {
	err := os.Remove(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// write replaces the file name in the directory atomically.
func (s *taskStore) write(name string, data []byte) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, ".tmp-"+name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// taskRefs formats ids as "#1, #2".
func taskRefs(ids []string) string {
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = "#" + id
	}
	return strings.Join(refs, ", ")
}

func taskStorageError(err error) tool.Result {
	return tool.Error(fmt.Sprintf("The task list could not be accessed: %v", err))
}
