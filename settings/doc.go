// Package settings loads, merges and updates Claude Code style settings
// files.
//
// # Loading
//
// Load reads up to five sources and merges them:
//
//	s, err := settings.Load(settings.Options{
//		Cwd:     "/home/me/project",
//		Sources: []settings.SettingSource{settings.User, settings.Project, settings.Local},
//		Flag:    `{"permissions": {"allow": ["Bash(npm test:*)"]}}`, // or a file path
//	})
//	if err != nil {
//		log.Fatal(err) // e.g. ".claude/settings.json: permissions.allow[2]: want a string, got number"
//	}
//	for _, r := range s.Permissions.Deny {
//		fmt.Println(r.Value, r.Source, r.Root)
//	}
//
// The sources, from highest precedence to lowest:
//
//	PolicySettings   /etc/claude-code/managed-settings.json (Options.ManagedPath)
//	FlagSettings     the --settings value: a file path, or inline JSON
//	LocalSettings    <cwd>/.claude/settings.local.json
//	ProjectSettings  <cwd>/.claude/settings.json
//	UserSettings     ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json)
//
// Options.Sources selects the user, project and local files, as the SDK's
// settingSources option does: nil means all three, an empty slice none.
// The managed policy and --settings always load.
//
// Single values (model, permissions.defaultMode, each env variable, each
// field this package does not model) come from the highest source that
// sets them. Lists (permission rules, additional directories, hooks) are
// concatenated from all sources, lowest first. Each [Rule] remembers its
// source, its file and the directory its "/path" patterns are relative
// to.
//
// Missing files are skipped, and a UTF-8 byte order mark is ignored. A
// malformed file fails the whole Load with an [Error] per problem, naming
// the file and the field; nothing is half-applied. The exception is the
// user file: a malformed or unreadable ~/.claude/settings.json is left out
// whole with a warning in Settings.Warnings, so one bad edit there does
// not stop every project. Unknown fields are kept, in Settings.Extra and
// Permissions.Extra. A few settings are read but ignored, with a warning
// in Settings.Warnings: hook events nobody knows, and a project or local
// file's defaultMode that would start sessions more permissively
// (acceptEdits, bypassPermissions, auto) and its sandbox.enabled false
// (see [Sandbox]) — a file that a cloned repository can ship is not
// trusted to do that. Two settings only tighten, so any source that sets
// them wins over every other: permissions.disableBypassPermissionsMode and
// permissions.disableAutoMode ("disable").
//
// # Writing permission updates
//
// Apply persists [PermissionUpdate] values, such as the suggestions of a
// permission prompt that a user accepted, in the file of their
// destination:
//
//	err := settings.Apply(opts, settings.PermissionUpdate{
//		Type:        settings.AddRules,
//		Rules:       []settings.RuleValue{{ToolName: "Bash", RuleContent: "npm test"}},
//		Behavior:    settings.Allow,
//		Destination: settings.LocalSettings,
//	})
//
// The rest of the file, including fields this package does not know, is
// kept in its order; the file is replaced atomically.
//
// # Trust and concurrency
//
// Settings files are trusted configuration: their hooks run commands with
// the privileges of the process, and their rules grant tool permissions.
// Load only reads and is safe for concurrent use; Apply calls are
// serialised within the process.
package settings
