package agentloop

import (
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/memory"
	"github.com/agentloop/agentloop/settings"
)

// This file decides which files a sandboxed command may never write
// because a later program loads them as configuration: the settings files
// the session read, the working directories' .claude trees and .mcp.json,
// the user's configuration directory, and the places outside agentloop
// where a planted file runs code later (git hooks and config, editor
// task files, shell start-up files).

// configDirs are the entries of each working directory that configure
// agentloop (a .claude tree: settings, agents, skills, commands, hooks,
// output styles, rules and memory; .mcp.json: the servers it starts).
// They are protected whether or not they exist: where one is missing, the
// sandbox holds an empty read-only directory at its name while commands
// run, so that none can be created.
var configEntries = []string{".claude", ".mcp.json"}

// foreignConfig are entries of a working directory that configure other
// programs to run code (git, editors, shells, ripgrep), as in the
// reference's sandbox. They are protected where they exist; a missing one
// may be created (git init makes .git/hooks, say).
var foreignConfig = []string{
	".git/hooks", ".git/config", ".gitconfig", ".gitmodules", ".husky",
	".vscode", ".idea", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc",
}

// configProtect returns the paths a sandboxed command of the session may
// not write, create, remove, rename or link over: protect must hold
// whether or not the path exists; existing holds only where it exists.
// Paths are absolute and clean.
func (s *session) configProtect() (protect, existing []string) {
	if testNoConfigProtect.Load() {
		return nil, nil
	}
	add := func(list *[]string, p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		if p = filepath.Clean(p); !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	dirs := append([]string{s.env.Cwd}, s.env.AdditionalDirs...)
	if root := memory.ProjectRoot(s.env.Cwd, s.env.Home); root != "" {
		dirs = append(dirs, root)
	}
	for _, d := range dirs {
		for _, e := range configEntries {
			add(&protect, filepath.Join(d, e))
		}
		for _, e := range foreignConfig {
			add(&existing, filepath.Join(d, e))
		}
	}
	if s.sb != nil {
		for _, p := range s.sb.settingsFiles {
			add(&protect, p)
		}
	}
	add(&protect, userConfigDir(s.env.Home))
	if s.env.Home != "" {
		add(&protect, filepath.Join(s.env.Home, ".claude"))
		add(&protect, filepath.Join(s.env.Home, ".claude.json"))
	}
	add(&protect, settings.DefaultManagedPath())
	add(&protect, managedPath()) // "" outside tests
	for _, p := range s.files.plugins {
		add(&existing, p.Root)
	}
	return protect, existing
}

// testNoConfigProtect switches configProtect off, for the tests'
// mutation checks only.
var testNoConfigProtect atomic.Bool

// userConfigDir is where the user's settings, agents, skills, commands
// and plugins live: $CLAUDE_CONFIG_DIR, else ~/.claude.
func userConfigDir(home string) string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// settingsFilePaths are the files of st that were read from disk.
func settingsFilePaths(st *settings.Settings) []string {
	var out []string
	for _, f := range st.Files {
		if f.Path != "" {
			out = append(out, f.Path)
		}
	}
	return out
}
