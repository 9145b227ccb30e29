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
// The switches that fence the file tools into the working directories
// tighten the same way: permissions.blockWritesOutsideWorkingDirectories
// and permissions.blockReadsOutsideWorkingDirectories hold when any source
// says true (Permissions.BlockWritesOutsideWorkingDirectories,
// BlockReadsOutsideWorkingDirectories name the highest such file).
// permissions.denyInsteadOfPrompting is honoured from the user file,
// --settings and the managed policy and ignored with a warning from the
// project and local files. The path lists permissions.blockReadsExemptPaths,
// workingDirectoriesExclude and workingDirectoriesAsGiven are read from
// --settings alone (ignored with a warning elsewhere); an entry that is
// not a plain absolute path (relative, "~…", a ".." segment, white space
// around it, "/") is dropped with a warning. Wrong types are errors, as
// everywhere.
//
// # Managed-only keys
//
// Some keys bind only when the managed policy sets them:
// allowManagedPermissionRulesOnly, allowManagedMcpServersOnly,
// allowedMcpServers, deniedMcpServers, disableSkillShellExecution,
// strictPluginOnlyCustomization, availableModels, availableModelsMatch
// and deniedModels, plus keys that restrict what no agentloop session can
// be made to do (forceLoginMethod, …). They are read into
// Settings.Managed from the policy file alone, type-checked there (a
// malformed one fails Load, as any field does), and never kept in Extra;
// in any other file they are ignored with a warning. [Managed] matches
// MCP servers and models against the lists; package agentloop enforces
// them, or refuses to start a session when it cannot.
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
