package conversation

import (
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
func (s *Session) configProtect() (protect, existing []string) {
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
		for _, p := range s.sb.configPaths {
			add(&protect, p)
		}
	}
	if s.env.Home != "" {
		add(&protect, filepath.Join(s.env.Home, ".claude"))
		add(&protect, filepath.Join(s.env.Home, ".claude.json"))
	}
	for _, p := range s.files.plugins {
		add(&existing, p.Root)
	}
	return protect, existing
}

// testNoConfigProtect switches configProtect off, for the tests'
// mutation checks only.
var testNoConfigProtect atomic.Bool

// configPaths are the configuration files and directories of the
// session that live outside its working directories: the settings files
// it read, the managed-settings path and the user's configuration
// directory. The sandbox keeps them read-only (configProtect) and the
// permission checker protects them from the file tools
// (permission.Config.Protected).
func (s *Session) configPaths(st *settings.Settings) []string {
	var out []string
	for _, f := range st.Files {
		if f.Path != "" {
			out = append(out, f.Path)
		}
	}
	out = append(out, settings.DefaultManagedPath())
	if p := managedPath(); p != "" { // tests only
		out = append(out, p)
	}
	if d := s.userConfigDir(); d != "" { // memory.go
		out = append(out, d)
	}
	return out
}

// sharedConfigPaths is configPaths, shared with the sessions that have the
// same (sharedConfigPaths): the caller must not change it.
func (s *Session) sharedConfigPaths(st *settings.Settings) []string {
	p := s.configPaths(st)
	p = slices.Clip(p) // an append by a reader copies
	return *sharedConfigPaths.share(&p)
}
