package agentloop

import "github.com/agentloop/agentloop/internal/conversation"

// ErrBypassAsRoot is matched (errors.Is) by the error of a session that
// would run in bypassPermissions while the process is root (effective
// uid 0) and IS_SANDBOX is not "1": starting in that mode
// (Options.PermissionMode, the settings' permissions.defaultMode, the
// CLI's --dangerously-skip-permissions) fails, and a later switch to it
// (Client.SetPermissionMode, set_permission_mode, a setMode permission
// update) is refused and changes nothing. Every tool call of a root
// session without prompts could change anything on the machine; inside a
// sandbox or throwaway container, where that is acceptable, set
// IS_SANDBOX=1 in agentloop's environment.
var ErrBypassAsRoot = conversation.ErrBypassAsRoot

// EnvIsSandbox names the variable that, set to "1", allows
// bypassPermissions to a process running as root. It is read from the
// process environment only: a settings file's env cannot set it.
const EnvIsSandbox = conversation.EnvIsSandbox

// ErrFileCheckpointingOff is returned by Client.RewindFiles when the
// session saves no file checkpoints (Options.EnableFileCheckpointing).
var ErrFileCheckpointingOff = conversation.ErrFileCheckpointingOff

// ErrBusy is yielded by Client.Query while another query of the same client
// is running.
var ErrBusy = conversation.ErrBusy

// ErrClosed is returned by a closed client, and is the cause of a query
// that Close cancelled.
var ErrClosed = conversation.ErrClosed

// ErrCloseTimeout is returned by Close when the running query did not stop
// within CloseTimeout (a tool that ignores cancellation, say). The cleanup
// then runs when the query stops.
var ErrCloseTimeout = conversation.ErrCloseTimeout

// CloseTimeout bounds how long Close waits for a running query to stop.
const CloseTimeout = conversation.CloseTimeout

// ErrInvalidInput is wrapped by Send's errors for a UserInput it refuses.
var ErrInvalidInput = conversation.ErrInvalidInput

// ErrInterrupted is the cause of a turn that Client.Interrupt ended (or a
// PriorityNow message cut short): context.Cause of the turn's context, and
// part of the text of its error result.
var ErrInterrupted = conversation.ErrInterrupted

// ErrInputDropped is wrapped by a *DroppedInputError.
var ErrInputDropped = conversation.ErrInputDropped

// DroppedInputError is returned by Client.Close when messages sent with
// Client.Send were still queued: they never ran and never joined the
// conversation. errors.Is(err, ErrInputDropped) holds.
type DroppedInputError = conversation.DroppedInputError

// ErrProjectHookRefused is wrapped by the failure of a project or local
// command hook that Options.ConfineProjectConfig keeps from running: the
// permission rules deny its command, or the kernel cannot sandbox it.
var ErrProjectHookRefused = conversation.ErrProjectHookRefused

// HookCallbackError is the error a Go hook callback returns when it
// stands for a hook registered elsewhere — a host's callback reached over
// a control protocol, as the agentloop CLI's hooks from an SDK host are —
// and that hook failed (the host answered with an error or with something
// that is not hook output, or could not be reached). The hook's answer is
// treated as empty, as for any callback error, but the failure is
// reported with the tag DiagHookCallbackFailed rather than DiagHookFailed.
// Err says what went wrong; the error's text is Err's.
type HookCallbackError = conversation.HookCallbackError

// ErrManagedPolicyUnsupported is matched (errors.Is) by the error of a
// session that does not start because the managed policy sets a key
// agentloop cannot enforce; the error names the key.
var ErrManagedPolicyUnsupported = conversation.ErrManagedPolicyUnsupported

// ErrManagedPolicyDenied is matched (errors.Is) by the error of what the
// managed policy forbids: a session, subagent or model switch to a model
// outside availableModels or in deniedModels. The error names the model
// and the key.
var ErrManagedPolicyDenied = conversation.ErrManagedPolicyDenied

// ErrNoMCPServer is returned by the MCP methods of [Client] for a server
// name the session does not have.
var ErrNoMCPServer = conversation.ErrNoMCPServer

// ErrPermissionModeDisabled is matched (errors.Is) by the error of a
// session that would start in a permission mode a settings file turned
// off, and of a request to switch to such a mode (Client.SetPermissionMode,
// a setMode permission update from CanUseTool or a PermissionRequest
// hook): bypassPermissions when a file sets
// permissions.disableBypassPermissionsMode to "disable", auto when one sets
// permissions.disableAutoMode to "disable". The error is a
// *PermissionModeDisabledError naming the setting and the file. Any
// settings source may turn a mode off, and none can turn it back on.
var ErrPermissionModeDisabled = conversation.ErrPermissionModeDisabled

// PermissionModeDisabledError is the error of a mode a settings file
// turned off; it matches ErrPermissionModeDisabled.
type PermissionModeDisabledError = conversation.PermissionModeDisabledError

// ErrSessionNotFound reports a session to resume that does not exist.
var ErrSessionNotFound = conversation.ErrSessionNotFound

// ErrStreamUsed is yielded by a Stream that was already consumed.
var ErrStreamUsed = conversation.ErrStreamUsed

// ErrSandboxUnavailable is wrapped by the error of a session whose
// settings require the sandbox (sandbox.failIfUnavailable) where the
// kernel cannot provide it (no Landlock, or not Linux).
var ErrSandboxUnavailable = conversation.ErrSandboxUnavailable

// ErrSessionBusy reports a session to resume or continue whose transcript
// another writer holds: another process, or another Query or Client in
// this one, in the middle of a run on the same session (an idle session,
// one whose holder waits for its next prompt, resumes; see
// docs/design.md). The Query fails at once rather than interleave two
// conversations in one transcript; resume with Options.ForkSession to
// continue in a new session, or try again once the other's run has
// ended. A Client whose own run finds the session taken that way fails
// that run with it. It is [session.ErrSessionBusy].
var ErrSessionBusy = conversation.ErrSessionBusy
