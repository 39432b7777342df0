//! handshake: a deterministic simulator of the shutdown and plan-approval
//! handshakes that agent teams use to coordinate.

pub mod agent;
pub mod bench;
pub mod cli;
pub mod protocol;
pub mod scenario;
pub mod team;
pub mod trace;
