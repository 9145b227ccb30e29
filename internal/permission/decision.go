package permission

import "github.com/agentloop/agentloop/internal/vocab"

// Behavior is what a decision, or a rule, says about a call; the
// vocabulary is vocab.Behaviors.
type Behavior = vocab.Behavior

// The three behaviors of the reference's permission system.
const (
	Allow = vocab.Allow
	Deny  = vocab.Deny
	Ask   = vocab.Ask
)

// Reason types, as the reference reports them in decision_reason_type and
// tool_result_meta.permission_decision.reason_type.
const (
	ReasonRule        = "rule"              // an allow, deny or ask rule decided
	ReasonMode        = "mode"              // the permission mode decided
	ReasonSubcommands = "subcommandResults" // every part of a shell command was judged
	ReasonWorkingDir  = "workingDir"        // a path lies outside the working directories
	ReasonSafetyCheck = "safetyCheck"       // a protected or critical path
	ReasonClassifier  = "classifier"        // the auto-mode classifier decided
	ReasonOther       = "other"             // the command could not be analysed
)

// Decision is the outcome of Checker.Decide for one tool call.
type Decision struct {
	// Behavior is Allow (run it), Deny (refuse it) or Ask (the caller asks
	// the host's canUseTool callback, a PermissionRequest hook or the user;
	// with nobody to ask, it refuses with Message).
	Behavior Behavior
	// Message is the text for the model when the call does not run: the
	// denial for Deny, the refusal to use when an Ask cannot be put to
	// anyone. It names the tool and the path or the command.
	Message string
	// ReasonType says what decided: one of the Reason* constants.
	ReasonType string
	// Reason is a short human explanation of the decision (for
	// decision_reason); it may be empty for plain mode approvals.
	Reason string
	// Rule is the rule that decided, in its canonical text form, when a
	// rule decided; RuleSource is where that rule came from.
	Rule       string
	RuleSource Source
	// BlockedPath is the file path that caused an Ask or Deny, if any
	// (blocked_path of the can_use_tool request).
	BlockedPath string
	// Suggestions are permission updates that would let this call run
	// without asking next time (permission_suggestions). Only set on Ask.
	Suggestions []Update
	// Path is, for a file tool (Read, Write, Edit, NotebookEdit,
	// MultiEdit), the physical path the call works on as this check
	// resolved it (see Checker.FilePath), whatever the behavior. A caller
	// that runs the call hands it to the tool, which then works on exactly
	// the file that was judged (or approved) and refuses when a symbolic
	// link on the way has been swapped in since.
	Path string
	// Blocked is set when the block settings decided (see Block): such a
	// Deny stands whatever a hook or callback says, and such an Ask must
	// be put to a person (or denied), never settled by a hook's allow,
	// the classifier or the sandbox.
	Blocked bool
}

// Allowed reports whether the call may run.
func (d Decision) Allowed() bool { return d.Behavior == Allow }
