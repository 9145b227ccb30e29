// Package assemble resolves what a session starts from — its workspace,
// its id, its model and permission mode, the source of its credentials,
// and its tool set — out of the caller's options and the loaded settings.
//
// Every function here is pure over its inputs (the process environment
// and file system reach it only through the values it is given, or, for
// Workspace, through a Stat of the directories named), so each rule of
// precedence can be tested alone. The root package's session assembly
// calls these in order and wires the results into the engine; it keeps
// only what needs its private session type.
package assemble
