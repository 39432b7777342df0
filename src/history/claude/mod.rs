//! Claude Code's agent teams, read as a history (issue 40, in progress):
//! the shapes its runtime writes (`message`), and the team folder that holds
//! them (`folder`). Written against Claude Code 2.1.x; docs/claude-code.md
//! says which version and which public evidence each shape comes from.

pub mod events;
pub mod folder;
pub mod message;
