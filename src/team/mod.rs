//! The actix shell: one actor per agent, one world they share (roster,
//! router, virtual clock, files, event log), and a driver that runs it all
//! on one thread, moving virtual time when every actor is idle.

pub mod actor;
pub mod deadlock;
pub mod filebox;
pub mod network;
pub mod queue;
pub mod sim;
pub mod world;

pub use filebox::FileMailbox;
pub use network::{Filter, Latency, LinkEffect, LinkFault, Partition, Scheduled};
pub use sim::{run, LeadSpec, Outcome, Step, Stop, TeamSpec};
pub use world::FileState;
