//! The actix shell: one actor and one mailbox per agent around the pure
//! world they share (`crate::world`), and a driver that runs it all on one
//! thread, moving virtual time when every actor is idle. Beside it, the
//! plain shell (`plain`): the same runs, in the same order, in one loop.

pub mod actor;
pub mod hooks;
pub mod plain;
pub mod sim;

pub use crate::world::{
    FileMailbox, FileState, Filter, Latency, LeadSpec, LinkEffect, LinkFault, Outcome, Partition, Scheduled, Step,
    Stop, TeamSpec,
};
pub use plain::run_plain;
pub use sim::run;
