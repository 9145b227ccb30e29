package tools

// OtherTasks is a registry of background tasks of the session that are not
// shells, such as a host's background subagents. Attached to the session's
// [Shells], its tasks can be stopped with TaskStop, and it is closed with
// the shells when the session ends.
type OtherTasks interface {
	// StopTask stops the task id and waits (bounded) for it to end. found
	// is false when the registry has no task id; err is non-nil when the
	// task could not be stopped or was no longer running.
	StopTask(id string) (res TaskStopResult, found bool, err error)
	// Close stops every task that still runs and removes what the tasks
	// left on disk.
	Close() error
}

// Attach adds o to the registries TaskStop and Close reach through s.
// Attaching the same registry twice has no further effect.
func (s *Shells) Attach(o OtherTasks) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.others {
		if have == o {
			return
		}
	}
	s.others = append(s.others, o)
}

func (s *Shells) attached() []OtherTasks {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OtherTasks(nil), s.others...)
}

// GitEnv returns env with the settings that keep a git command from running
// programs a repository's own configuration names (hooks, filters,
// fsmonitor, pagers): the environment the tools give git.
func GitEnv(env []string) []string { return withGitHardening(env) }
