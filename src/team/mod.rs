//! The actix shell: one actor and one mailbox per agent around the pure
//! world they share (`crate::world`), and a driver that runs it all on one
//! thread, moving virtual time when every actor is idle.

pub mod actor;
pub mod sim;

pub use crate::world::{
    FileMailbox, FileState, Filter, Latency, LeadSpec, LinkEffect, LinkFault, Outcome, Partition, Scheduled, Step,
    Stop, TeamSpec,
};
pub use sim::run;
