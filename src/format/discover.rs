//! Finding and loading scenario files: paths may be files or folders.

use super::build::{load_str, read_file, Scenario, ScenarioError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Expands folders into the `.toml` files they hold, subfolders included,
/// and keeps files as given. Within a folder its own files come first, then
/// each subfolder's, all sorted by name, so runs list in a stable order. A
/// folder with no scenario anywhere in it is an error: the user named it
/// expecting something to run.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let before = out.len();
            // The folder that could not be read, which may be one inside it.
            walk(p, &mut out, &mut BTreeSet::new()).map_err(|(dir, e)| {
                whole_file(&dir, format!("cannot read the folder: {e}"), "check that you may read the folder")
            })?;
            if out.len() == before {
                return Err(whole_file(
                    p,
                    "no scenario files (.toml) in this folder or its subfolders".to_string(),
                    "add one (see docs/scenarios.md), or name other files or folders",
                ));
            }
        } else if p.exists() || super::bundled::by_path(p).is_some() {
            out.push(p.clone());
        } else {
            return Err(whole_file(
                p,
                "no such file or folder, and no bundled scenario of that number or name".to_string(),
                &format!(
                    "check the path (with none, the scenarios/ folder is read); `{} scenarios` lists the bundled ones",
                    crate::words::program()
                ),
            ));
        }
    }
    Ok(out)
}

/// Depth first, files before subfolders. `seen` holds the folders already
/// walked (by their real path), so a symbolic link back up the tree is
/// followed once, not forever.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut BTreeSet<PathBuf>) -> Result<(), (PathBuf, std::io::Error)> {
    let here = |e| (dir.to_path_buf(), e);
    if !seen.insert(dir.canonicalize().map_err(here)?) {
        return Ok(());
    }
    let listed = std::fs::read_dir(dir).map_err(here)?;
    let mut entries: Vec<PathBuf> = listed.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    let (folders, files): (Vec<PathBuf>, Vec<PathBuf>) = entries.into_iter().partition(|p| p.is_dir());
    out.extend(files.into_iter().filter(|f| f.extension().is_some_and(|x| x == "toml")));
    for folder in folders {
        walk(&folder, out, seen)?;
    }
    Ok(())
}

/// A path that names no scenario is a problem of the whole path, at no line.
fn whole_file(p: &Path, message: String, help: &str) -> ScenarioError {
    let mut e = ScenarioError::whole_file(&p.display().to_string(), message);
    e.help(help);
    e
}

/// Loads every file, collecting every error of every file.
pub fn load_all(files: &[PathBuf]) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let (ok, errors) = load_all_with_text(files);
    (ok.into_iter().map(|(s, _)| s).collect(), errors)
}

/// A file's path as shown, and the text it held.
pub type Source = (String, String);

/// Like [`load_all`], each scenario with the text it was loaded from: a
/// sweep's threads load their own copies from it, since a pipe cannot be
/// read twice and a file may change meanwhile.
pub fn load_all_with_text(files: &[PathBuf]) -> (Vec<(Scenario, Source)>, Vec<ScenarioError>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let shown = f.display().to_string();
        match read_file(f).map_err(|e| vec![e]).and_then(|text| load_str(&shown, &text).map(|s| (s, text))) {
            Ok((s, text)) => ok.push((s, (shown, text))),
            Err(e) => errors.extend(e),
        }
    }
    (ok, errors)
}
