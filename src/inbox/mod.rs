//! File inboxes: each agent's mailbox as an append-only JSON Lines file, the
//! way the reference course's `MessageBus` keeps `.team/inbox/<name>.jsonl`.
//!
//! Pure, like [`protocol`](crate::protocol): a simulated file system whose
//! every operation is one step, so the simulator decides what happens between
//! two of them (a send between a read and its truncate, a crash in the middle
//! of an append). No actix, no clock; the only real I/O is the optional disk
//! mirror. See `docs/inboxes.md` for the world this models.
//!
//! - [`fs`]: the simulated file system and its operations ([`FsOp`]).
//! - [`line`]: one message as one line of the reference's format.
//! - [`scan`]: bytes to lines, skipping torn and invalid ones.
//! - [`write`]: a sender's append, which terminates a torn fragment first.
//! - [`drain`]: the owner's two-step read, with the reference's drain and a safe one.
//! - [`cost`]: what a read costs its reader, growing with the file.
//! - [`mirror`]: real files that follow the simulated ones (`--inbox-dir`).
//! - [`team`]: a Claude Code team folder's files, as the `claude-code`
//!   mailbox world writes them.
//! - [`team_text`]: a Claude Code inbox entry's `text`, read and written in
//!   the runtime's shapes (the `claude-code` mailbox world writes it, the
//!   audit of a team folder reads it).

pub mod cost;
pub mod drain;
pub mod fs;
pub mod line;
pub mod mirror;
pub mod scan;
pub mod team;
pub mod team_text;
pub mod write;

pub use cost::ReadCost;
pub use drain::{begin_read, committed, finish_read, offset_path, prune, Batch, Drain, Finished, ReadToken};
pub use fs::{FsOp, SimFile, SimFs, MAX_HELD_BYTES};
pub use line::{Line, LineError, SharedText, SHUTDOWN_CONTENT};
pub use mirror::{DiskMirror, MirrorError};
pub use scan::{scan, Scanned, Skipped};
pub use write::{append_line, append_line_torn, framed, framed_shared, inbox_path};
