//! The scenario file format, a layer below the engine: reading a file
//! (TOML, each problem said with where it is and how to fix it), its
//! durations, finding the files of a folder, and building the runnable
//! [`Scenario`] a file describes. It depends on the world's vocabulary and
//! never on a shell, the explorer or a command, so whatever reads or writes
//! scenario files (run, explore, fuzz, shrink, the history's --to-scenario)
//! can use it without pulling in the engine above.

pub mod build;
pub mod bundled;
pub mod discover;
pub mod duration;
pub mod file;
pub mod reference;
pub mod write;

pub use build::{load_doc, load_file, load_str, read_file, Expect, FileExpect, Scenario, ScenarioError};
