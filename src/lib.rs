//! handshake: a deterministic simulator of the shutdown and plan-approval
//! handshakes that agent teams use to coordinate.

pub mod protocol;
pub mod agent;
pub mod trace;
pub mod team;
