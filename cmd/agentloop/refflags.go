package main

import (
	"fmt"
	"slices"
	"strings"
)

// refFlagDefs are the flags of the reference CLI's --help that are in
// neither flagDefs nor sdkFlagDefs: the ones an SDK host can pass through
// extraArgs. None is "unknown": each is honoured, accepted with a warning
// (it has no meaning in a print-mode engine, and running without it
// changes nothing the caller relies on), or refused with an error naming
// it (running without it would be a different run from the one asked
// for). docs/interop.md, "Command-line flags", lists every flag with what
// agentloop does with it, and TestFlagTable holds this file to it.
var refFlagDefs = []flagDef{
	{[]string{"--name", "-n"}, kString, "name the session: a custom-title entry in its transcript and a session_title_changed message", func(c *config, v string) error {
		if strings.TrimSpace(v) == "" {
			// The reference takes it as no name; an SDK's extraArgs may
			// pass one.
			warnOnce(c, fmt.Sprintf("--name %q is ignored: the session gets no name", v))
			c.name = ""
			return nil
		}
		c.name = v
		return nil
	}},
	{[]string{"--disable-slash-commands"}, kBool, "offer the model no skills (a /name prompt still runs a command or skill)", func(c *config, _ string) error {
		c.noSkills = true
		warnOnce(c, "--disable-slash-commands only hides the skills from the model: a prompt that starts with /name still runs that command or skill")
		return nil
	}},

	// Accepted with a warning: terminal, IDE and app integrations that a
	// print-mode engine has no use for.
	{[]string{"--ax-screen-reader"}, kBool, "ignored, with a warning", func(c *config, _ string) error {
		return ignore(c, "--ax-screen-reader", "there is no terminal interface to render")
	}},
	{[]string{"--brief"}, kBool, "ignored, with a warning", func(c *config, _ string) error { return ignore(c, "--brief", "there is no SendUserMessage tool") }},
	{[]string{"--chrome"}, kBool, "ignored, with a warning", func(c *config, _ string) error {
		return ignore(c, "--chrome", "there is no Claude in Chrome integration")
	}},
	{[]string{"--no-chrome"}, kBool, "ignored, with a warning", func(c *config, _ string) error {
		return ignore(c, "--no-chrome", "there is no Claude in Chrome integration to turn off")
	}},
	{[]string{"--ide"}, kBool, "ignored, with a warning", func(c *config, _ string) error { return ignore(c, "--ide", "there is no IDE integration") }},
	{[]string{"--desktop"}, kBool, "ignored, with a warning", func(c *config, _ string) error {
		return ignore(c, "--desktop", "there is no desktop app; the session runs here")
	}},
	{[]string{"--remote-control"}, kOptional, "ignored, with a warning", func(c *config, _ string) error { return ignore(c, "--remote-control", "there is no Remote Control") }},
	{[]string{"--remote-control-session-name-prefix"}, kString, "ignored, with a warning", func(c *config, _ string) error {
		return ignore(c, "--remote-control-session-name-prefix", "there is no Remote Control")
	}},
	{[]string{"--system-prompt-snapshot"}, kString, "on or off; ignored, with a warning", func(c *config, v string) error {
		if v != "on" && v != "off" {
			return fmt.Errorf("--system-prompt-snapshot %q: want on or off", v)
		}
		return ignore(c, "--system-prompt-snapshot", "no system prompt snapshot is recorded in the transcript or replayed on resume")
	}},

	// Refused: a run without the feature would not be the one asked for.
	{[]string{"--bg", "--background"}, kBool, "not supported yet", func(*config, string) error {
		return refuse("--bg", "there are no background sessions; run agentloop in the background yourself")
	}},
	{[]string{"--bare"}, kBool, "not supported yet", func(*config, string) error {
		return refuse("--bare", "hooks, plugins and CLAUDE.md would still be loaded; use --setting-sources \"\" and --strict-mcp-config for a run without the user's and project's configuration")
	}},
	{[]string{"--safe-mode"}, kBool, "not supported yet", func(*config, string) error {
		return refuse("--safe-mode", "customizations would still be loaded; use --setting-sources \"\" and --strict-mcp-config")
	}},
	{[]string{"--restricted"}, kBool, "not supported yet", func(*config, string) error {
		return refuse("--restricted", "the command-running tools would not be removed nor the file tools confined; use --tools and --permission-mode")
	}},
	{[]string{"--cloud"}, kOptional, "not supported yet", func(*config, string) error { return refuse("--cloud", "there are no cloud sessions") }},
	{[]string{"--environment"}, kString, "not supported yet", func(*config, string) error { return refuse("--environment", "there are no cloud sessions") }},
	{[]string{"--teleport"}, kOptional, "not supported yet", func(*config, string) error { return refuse("--teleport", "there are no cloud sessions to resume") }},
	{[]string{"--from-pr"}, kOptional, "not supported yet", func(*config, string) error {
		return refuse("--from-pr", "sessions are not linked to pull requests; use --resume <id>")
	}},
	{[]string{"--file"}, kList, "not supported yet", func(*config, string) error {
		return refuse("--file", "files are not downloaded from the Files API at startup")
	}},
	{[]string{"--plugin-url"}, kString, "not supported yet", func(*config, string) error {
		return refuse("--plugin-url", "plugins are not fetched from URLs; use --plugin-dir")
	}},
	{[]string{"--worktree", "-w"}, kOptional, "not supported yet", func(*config, string) error {
		return refuse("--worktree", "no git worktree is created; the session would run in the working directory")
	}},
	{[]string{"--tmux"}, kEqValue, "not supported yet", func(*config, string) error {
		return refuse("--tmux", "it goes with --worktree, which is not supported")
	}},
}

// warnOnce adds the warning w once, however often it is asked for.
func warnOnce(c *config, w string) {
	if !slices.Contains(c.warnings, w) {
		c.warnings = append(c.warnings, w)
	}
}

// boolWords are the values --prompt-suggestions takes, as the reference
// lists them; without one it means true.
var boolWords = []string{"true", "false", "1", "0", "yes", "no", "on", "off"}

// refSubcommands are the commands of the reference CLI's --help. Without
// -p, the reference runs one given as the first argument; agentloop has
// only serve, so it refuses them rather than sending the word as a prompt.
// With -p the word is the prompt, in both.
var refSubcommands = []string{"agents", "attach", "auth", "auto-mode", "doctor", "gateway", "import", "install",
	"kill", "logs", "mcp", "plugin", "plugins", "purge", "respawn", "rm", "setup-token", "stop", "ultrareview",
	"update", "upgrade"}

// checkSubcommand refuses a reference command given as the first argument
// without -p.
func (c *config) checkSubcommand(args []string) error {
	if c.print || len(args) == 0 || !slices.Contains(refSubcommands, args[0]) {
		return nil
	}
	return fmt.Errorf("%q is a command of the reference CLI that agentloop does not have (its only command is serve); to send it as a prompt, give -p", args[0])
}
