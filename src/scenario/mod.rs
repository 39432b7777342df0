//! Scenario files run and judged: play a scenario (`run_scenario`), check
//! the run against the file's expectations and the oracle, and play it again
//! with one setting changed (`whatif`). Reading and building the file is the
//! format's, a layer below ([`crate::format`]); its paths stay here too.

pub use crate::format::{build, discover, duration, file};
pub use crate::format::{load_file, load_str, read_file, Expect, FileExpect, Scenario, ScenarioError};
/// The invariants moved to [`crate::oracle`]; this path stays for code written against it.
pub use crate::oracle::Invariant;
pub mod check;

pub use check::{deadlocks, run_scenario, DeadlockReport, Report, RunOptions};
pub mod whatif;
