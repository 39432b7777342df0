//! `run --inbox-dir DIR`: the folder a run writes its inbox files into,
//! checked before anything runs, emptied of the last run's files, and
//! marked with a note listing what the run left, so that the next run
//! replaces those and nothing a person put there since.

use std::path::{Path, PathBuf};

/// The note `--inbox-dir` leaves in its folder: a folder that has it was
/// written by a run, and it lists the inbox files that run left, which
/// the next run replaces.
const INBOX_DIR_NOTE: &str = ".handshake-inbox-dir";

/// Whether `rel`, a path inside an inbox folder, is one of the files a run
/// writes there or `audit` reads there as an inbox: a team folder's
/// `config.json` and `inboxes/*.json`, file inboxes' `*.jsonl` and their
/// `*.jsonl.offset`.
fn is_inbox_file(rel: &Path) -> bool {
    let name = rel.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    match rel.parent().map(Path::as_os_str) {
        Some(p) if p.is_empty() => name == "config.json" || name.ends_with(".jsonl") || name.ends_with(".jsonl.offset"),
        Some(p) if p == "inboxes" => name.ends_with(".json"),
        _ => false,
    }
}

/// The inbox files in `dir`, one at a time (a folder of any size costs no
/// memory), links included.
fn inbox_files_in(dir: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    let listed = |sub: &'static str| {
        std::fs::read_dir(dir.join(sub)).into_iter().flatten().flatten().filter_map(move |e| {
            let rel = Path::new(sub).join(e.file_name());
            let kind = e.file_type().ok()?;
            (is_inbox_file(&rel) && (kind.is_file() || kind.is_symlink())).then(|| dir.join(rel))
        })
    };
    listed("").chain(listed("inboxes"))
}

/// Bad input about `--inbox-dir`, found before anything is changed: an
/// input or another output that is one of the inbox files in its folder
/// (the run would replace it, and `audit` would read it as an inbox), and a
/// folder holding inbox files no run wrote (`audit` would judge them as
/// this run's: a previous team's inbox, a file of the user's own).
pub(super) fn problem(dir: &Path, named: &[(&str, &Path)]) -> Option<String> {
    // Not made yet: nothing is in it.
    let real_dir = std::fs::canonicalize(dir).ok()?;
    for (what, path) in named {
        let real = super::real_path(path);
        if real.as_deref().and_then(|r| r.strip_prefix(&real_dir).ok()).is_some_and(is_inbox_file) {
            return Some(format!(
                "{what} {} is one of the inbox files in {}: the run would replace it, and audit would read it as \
                 an inbox; name a file elsewhere",
                path.display(),
                dir.display()
            ));
        }
    }
    // The run writes a team folder's inboxes into `inboxes/` itself, never
    // through a link (its target's files would be written, and removed).
    let inboxes = real_dir.join("inboxes");
    if std::fs::symlink_metadata(&inboxes).is_ok_and(|m| !m.is_dir()) {
        return Some(format!(
            "{} is a symbolic link or a file, not a folder: the run writes its inboxes only into a real folder; \
             give an empty or a new folder",
            dir.join("inboxes").display()
        ));
    }
    // What audit reads in the folder that no run writes: found first (a
    // reference inbox folder below it) or beside the run's (its tasks).
    for sub in ["inbox", ".team/inbox", ".mailboxes", "tasks"] {
        if std::fs::symlink_metadata(real_dir.join(sub)).is_ok() {
            return Some(format!(
                "{} is there, and no run writes it: audit {} would read it as this run's; give an empty or a new \
                 folder",
                dir.join(sub).display(),
                dir.display()
            ));
        }
    }
    // A folder a run wrote: its note lists the files that run left (a run
    // stopped before it could list them left them all), and only those are
    // the next run's to replace: a file put there since is the user's.
    let written = match written_by_a_run(&real_dir) {
        Some(Written::Listed(files)) => files,
        Some(Written::Unlisted) => return None,
        None => Default::default(),
    };
    let found = inbox_files_in(&real_dir).find(|f| !written.contains(&relative(&real_dir, f)))?;
    let rel = relative(&real_dir, &found);
    Some(format!(
        "{} already holds inbox files no run wrote ({rel}): audit would judge them as this run's; give an empty \
         or a new folder",
        dir.display()
    ))
}

/// What a folder's note says a run wrote there.
enum Written {
    /// The inbox files the last run left, by path inside the folder.
    Listed(std::collections::BTreeSet<String>),
    /// A run began and did not list its files (it was stopped, or an older
    /// version wrote the note): every inbox file there is taken as its.
    Unlisted,
}

/// The line before a note's list of the files a run left.
const WRITTEN: &str = "written by the last run:";

/// Whether a run wrote in `dir` (its note is there), and what it left.
fn written_by_a_run(dir: &Path) -> Option<Written> {
    let note = std::fs::read_to_string(dir.join(INBOX_DIR_NOTE)).ok()?;
    Some(match note.split_once(&format!("\n{WRITTEN}\n")) {
        Some((_, list)) => Written::Listed(list.lines().map(str::to_string).collect()),
        None => Written::Unlisted,
    })
}

/// `path`, inside `dir`, as the note lists it (`inboxes/bob.json`).
fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).to_string_lossy().into_owned()
}

/// The folder's note: what writes it, and, once the run is over, the inbox
/// files it left (`None` while it runs).
fn write_inbox_dir_note(dir: &Path, left: Option<&[String]>) -> Result<(), String> {
    let mut note = "This folder is written by `run --inbox-dir`: each run replaces the inbox files the last run \
                    left in it (config.json, inboxes/*.json, *.jsonl, *.jsonl.offset), listed below; a run refuses \
                    a folder holding others.\n"
        .to_string();
    if let Some(files) = left {
        note.push_str(&format!("{WRITTEN}\n"));
        for f in files {
            note.push_str(f);
            note.push('\n');
        }
    }
    crate::output::write_bytes(&dir.join(INBOX_DIR_NOTE), note.as_bytes())
}

/// Once the run is over: the note lists the inbox files it left, so the
/// next run replaces those and no file put there since.
pub(super) fn list_files_left(dir: &Path) -> Result<(), String> {
    let mut left: Vec<String> = inbox_files_in(dir).map(|f| relative(dir, &f)).collect();
    left.sort();
    write_inbox_dir_note(dir, Some(&left))
}

/// Makes the folder `--inbox-dir` names, with its note, and removes the
/// inbox files a previous run left there (the checks before made sure a
/// run wrote them): the mirror appends as the run does, and a previous
/// team's inbox would be judged with this one's. Other files are left alone.
pub(super) fn prepare(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the folder {}: {e}", dir.display()))?;
    let previous = match written_by_a_run(dir) {
        Some(Written::Listed(files)) => Some(files),
        _ => None,
    };
    write_inbox_dir_note(dir, None)?;
    let theirs = |path: &PathBuf| previous.as_ref().is_none_or(|files| files.contains(&relative(dir, path)));
    let old: Vec<PathBuf> = inbox_files_in(dir).filter(theirs).collect();
    for path in old {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot remove the previous run's {}: {e}", path.display()))
            }
            _ => {}
        }
    }
    Ok(())
}
