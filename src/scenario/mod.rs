//! Scenario files: parse and check them, run them, judge the run.

pub mod build;
pub mod duration;
pub mod file;
pub mod invariant;

pub use build::{load_file, load_str, read_file, Expect, FileExpect, Scenario, ScenarioError};
pub use invariant::Invariant;
pub mod check;
pub mod oracle;

pub use check::{deadlocks, run_scenario, DeadlockReport, Report, RunOptions};
pub mod discover;
