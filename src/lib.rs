//! handshake: a deterministic simulator of the shutdown and plan-approval
//! handshakes that agent teams use to coordinate.

pub mod agent;
pub mod protocol;
pub mod team;
pub mod trace;
pub mod scenario;
pub mod cli;
