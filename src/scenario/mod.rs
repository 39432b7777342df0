//! Scenario files: parse and check them, run them, judge the run.

pub mod build;
pub mod duration;
pub mod file;

/// The invariants moved to [`crate::oracle`]; this path stays for code written against it.
pub use crate::oracle::Invariant;
pub use build::{load_file, load_str, read_file, Expect, FileExpect, Scenario, ScenarioError};
pub mod check;

pub use check::{deadlocks, run_scenario, DeadlockReport, Report, RunOptions};
pub mod discover;
pub mod replay;
pub mod whatif;
