//! `handshake check`: validate files, run nothing.

use super::{noun, scenario_files, EXIT_BAD_INPUT, EXIT_OK};
use crate::scenario::discover::load_all;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files or folders of them, subfolders included [default: scenarios/]
    pub paths: Vec<PathBuf>,
}

pub fn main(a: CheckArgs) -> i32 {
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let (ok, errors) = load_all(&files);
    if !errors.is_empty() {
        eprint!("{}", crate::diagnostic::render_all(&errors, crate::diagnostic::stderr_color()));
    }
    for s in &ok {
        println!("ok    {}  ({})", super::shown(&s.path), super::shown(&s.name));
    }
    let bad = files.len() - ok.len();
    println!("{} {}: {} ok, {} bad", files.len(), noun(files.len() as u64, "file"), ok.len(), bad);
    if errors.is_empty() {
        EXIT_OK
    } else {
        EXIT_BAD_INPUT
    }
}
