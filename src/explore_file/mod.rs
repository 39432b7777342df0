//! The explorer applied to scenario files: how the explorer sees a
//! [`Scenario`](crate::scenario::Scenario) (its team, and the file's
//! expectations to judge schedules by), and a counterexample written back
//! as a scenario file that `handshake run` replays. It sits above both the
//! explorer and the runner it bridges, so neither depends on the other.

pub mod scenario_file;
mod subject;

pub use scenario_file::scenario_file;
