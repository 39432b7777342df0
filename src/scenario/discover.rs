//! Finding and loading scenario files: paths may be files or folders.

use super::build::{load_file, Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// Expands folders into their `.toml` files (sorted, so runs list in a stable
/// order) and keeps files as given.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| whole_file(p, format!("cannot read the folder: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            out.extend(found);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(whole_file(p, "no such file or folder".to_string()));
        }
    }
    Ok(out)
}

fn whole_file(p: &Path, message: String) -> ScenarioError {
    ScenarioError { path: p.display().to_string(), line: 0, col: 0, message }
}

/// Loads every file, collecting every error of every file.
pub fn load_all(files: &[PathBuf]) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match load_file(f) {
            Ok(s) => ok.push(s),
            Err(e) => errors.extend(e),
        }
    }
    (ok, errors)
}
