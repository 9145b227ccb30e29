// Package session reads and writes session transcripts in the format of the
// reference CLI, so that sessions interchange with it: a session agentloop
// wrote can be resumed, listed and forked by the reference tools and the
// other way round.
//
// # Where transcripts live
//
// A session is one conversation, named by a UUID. Its transcript is a JSONL
// file, one [Entry] per line:
//
//	<configDir>/projects/<project>/<sessionId>.jsonl
//	<configDir>/projects/<project>/<sessionId>/subagents/agent-<agentId>.jsonl
//	<configDir>/projects/<project>/<sessionId>/subagents/agent-<agentId>.meta.json
//
// configDir is $CLAUDE_CONFIG_DIR or ~/.claude ([DefaultConfigDir]; every
// function taking a configDir treats "" as that). <project> is the working
// directory with symlinks resolved and every character outside
// [A-Za-z0-9] replaced by "-" ([ProjectKey]): /home/me/proj becomes
// -home-me-proj. [Path] puts it together.
//
// # Writing a session
//
// The loop opens a [Writer] and appends an entry for each thing the
// conversation records:
//
//	w, err := session.Open(session.Path("", cwd, id), session.Envelope{
//		SessionID: id, Cwd: cwd, Version: "agentloop 0.1.0"})
//	w.Append(session.PromptEntry(promptUUID, prompt, "default"))
//	w.Append(session.AssistantEntry(a))     // each assistant block
//	w.Append(session.UserEntry(u, mode))    // each tool result
//	w.Append(session.LastPromptEntry(prompt, ""),
//		session.CostStateEntry(session.CostFromResult(res, start)))
//
// The Writer fills in the envelope, uuids, timestamps and the parentUuid
// chain, and writes each batch as whole lines in one write, so a crash
// leaves at worst a cut final line, which readers skip.
//
// # Resume, continue, fork
//
// To resume a session, find its file, open it for writing (which takes
// the session's lock: a second writer gets ErrSessionBusy) and send the
// history read under that lock:
//
//	p, err := session.Find("", id)          // searches every project
//	w, err := session.Open(p, env)          // appends continue the chain
//	t := w.Transcript()                     // what Open read, under the lock
//	history := t.History()                  // []model.Message for the API
//	totals := t.Cost                        // restore the running cost
//
// [Load] reads a transcript without the lock, for listing and inspection;
// it never modifies the file.
//
// [Transcript.History] rebuilds the API messages from the chain: the
// blocks of one reply, written one per line, become one assistant message
// again, thinking blocks keep their signatures, and tool results are
// merged into one user message. A resumed session keeps its id and appends
// to the same file.
//
// To continue the most recent session of a directory (--continue), use
// [Latest]; [List] returns all of them with their summaries. [Fork] copies
// a session (or its beginning) into a new one with fresh uuids; [Rename],
// [Tag] and [Delete] manage sessions.
//
// # Stores for many hosts
//
// A [Store] keeps transcripts away from the local disk, so that another
// host can resume a session. Wrap the Writer in a [Mirror] to copy each
// batch to the store after the local write:
//
//	m := session.NewMirror(w, store, session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: id},
//		session.MirrorOptions{OnError: report})
//	m.Append(entries...)
//	m.Close(ctx)
//
// On the other host, [Restore] writes the session from the store into the
// local layout, where it is resumed as above. [MemoryStore] and
// [FileStore] implement Store; package storetest checks any other
// implementation.
package session
