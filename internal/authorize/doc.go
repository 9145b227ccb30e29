// Package authorize decides whether one tool call may run, in the
// reference's order:
//
//  1. PreToolUse hooks. Deny ends it (the hook's message goes to the
//     model); defer leaves the call pending when it is the only call of
//     a main-loop reply, and is a denial otherwise; ask skips the rules
//     and the mode and goes to step 4; allow skips the mode and the allow
//     rules but not the deny and ask rules. A hook's updatedInput
//     replaces the input for every later step.
//  2. The permission checker: deny rules, ask rules, the mode, allow rules.
//  3. For an undecided Bash call, the sandbox may allow it.
//  4. PermissionRequest hooks, then the CanUseTool callback; with neither
//     answering, the call is denied with the checker's message.
//
// An [Authorizer] takes each collaborator as a field (a hook runner, the
// checker, the callback, the update applier, the diagnostics sink), so
// the order can be tested alone, with fakes; the root package wires in
// the session's own.
package authorize
