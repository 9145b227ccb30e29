package settings

import (
	"maps"
	"slices"
)

// EnvLayer is the env object of one settings file.
type EnvLayer struct {
	Source Source
	File   string // the file as a user would name it; "--settings" for inline JSON
	Env    map[string]string
}

// addEnvLayer records l's env, if any, in s.EnvLayers.
func addEnvLayer(s *Settings, l *layer) {
	if len(l.env) > 0 {
		s.EnvLayers = append(s.EnvLayers, EnvLayer{Source: l.source, File: l.display, Env: maps.Clone(l.env)})
	}
}

// IgnoredEnv is a variable [Settings.TrustedEnv] left out.
type IgnoredEnv struct {
	Key    string
	Source Source
	File   string
}

// TrustedEnv merges the env objects as Env does (a higher-precedence file
// wins), leaving out each variable for which untrusted(source, key)
// reports true, so that a lower-precedence file's value of it (or none)
// stands. It returns the merged variables and the ones left out, in file
// order. Settings built without Load (no EnvLayers) have Env trusted as
// a whole.
func (s *Settings) TrustedEnv(untrusted func(src Source, key string) bool) (map[string]string, []IgnoredEnv) {
	out := map[string]string{}
	if s == nil {
		return out, nil
	}
	if len(s.EnvLayers) == 0 {
		maps.Copy(out, s.Env)
		return out, nil
	}
	var ignored []IgnoredEnv
	for _, l := range s.EnvLayers {
		for _, k := range slices.Sorted(maps.Keys(l.Env)) {
			if untrusted != nil && untrusted(l.Source, k) {
				ignored = append(ignored, IgnoredEnv{Key: k, Source: l.Source, File: l.File})
				continue
			}
			out[k] = l.Env[k]
		}
	}
	return out, ignored
}

// RepoShipped reports whether files of the source live inside the project
// and so can arrive with a cloned repository (the project and local
// files).
func RepoShipped(src Source) bool { return repoShipped(src) }
