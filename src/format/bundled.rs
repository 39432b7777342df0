//! The scenarios that come with the program: scenarios/ is built into the
//! binary (by build.rs), so an installed `handshake` lists them, runs one
//! by number or name (`handshake run 22`) and writes one out to edit
//! (`handshake new --from 22 my.toml`) from any folder.
//!
//! A bundled scenario is named `bundled:22-peer-deadlock.toml` wherever a
//! path is shown (a `reproduce:` line, an error), and every command that
//! reads a scenario file reads that name: no file of that name is ever
//! read or written.

use std::path::{Path, PathBuf};

/// How a bundled scenario's name begins.
pub const PREFIX: &str = "bundled:";

/// Each file of scenarios/ and its text, in name order.
static ALL: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// One bundled scenario: its file's name and its text.
#[derive(Clone, Copy, Debug)]
pub struct Bundled {
    pub file: &'static str,
    pub text: &'static str,
}

impl Bundled {
    /// `bundled:<file>`, the path every command takes it by.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("{PREFIX}{}", self.file))
    }

    /// Its number: `22` for `22-peer-deadlock.toml`.
    pub fn number(&self) -> Option<u32> {
        self.file.split('-').next()?.parse().ok()
    }

    /// The name the scenario gives itself (`name = "..."` before its first
    /// table), as reports and pages title it: `shutdown-timeout-kills-stalled-teammate`
    /// for `03-stalled-teammate-killed.toml`.
    pub fn declared_name(&self) -> Option<&'static str> {
        let top = self.text.lines().take_while(|l| !l.trim_start().starts_with('['));
        top.filter_map(|l| {
            l.trim().strip_prefix("name")?.trim_start().strip_prefix('=')?.trim().strip_prefix('"')?.strip_suffix('"')
        })
        .next()
    }

    /// The file's name without its number and `.toml`: `peer-deadlock`.
    pub fn short(&self) -> &'static str {
        let stem = self.file.trim_end_matches(".toml");
        stem.split_once('-').filter(|(n, _)| n.parse::<u32>().is_ok()).map_or(stem, |(_, rest)| rest)
    }
}

/// Every bundled scenario, in order.
pub fn all() -> impl Iterator<Item = Bundled> {
    ALL.iter().map(|&(file, text)| Bundled { file, text })
}

/// The bundled scenario `path` names (`bundled:<file>`), if it names one.
pub fn by_path(path: &Path) -> Option<Bundled> {
    let file = path.to_str()?.strip_prefix(PREFIX)?;
    all().find(|b| b.file == file)
}

/// Whether `path` is written as a bundled scenario's (whether or not one
/// has that name).
pub fn is_bundled(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with(PREFIX))
}

/// The bundled scenario a person means by `reference`: its number (`22`),
/// its file's name with or without `.toml` (`22-peer-deadlock`), that name
/// without the number (`peer-deadlock`), `scenarios/<file>`,
/// `bundled:<file>`, or the name it gives itself, as reports show it.
pub fn find(reference: &str) -> Option<Bundled> {
    // `scenarios/22-peer-deadlock.toml`, as the docs and help write it,
    // names the bundled copy wherever there is no such file.
    let r = reference.strip_prefix(PREFIX).unwrap_or(reference);
    let r = r.strip_prefix("scenarios/").or_else(|| r.strip_prefix("./scenarios/")).unwrap_or(r);
    let r = r.strip_suffix(".toml").filter(|n| n.bytes().all(|b| b.is_ascii_digit())).unwrap_or(r);
    // Digits only: `+22` is not a number a person writes for a file.
    let number = r.bytes().all(|b| b.is_ascii_digit()).then(|| r.parse::<u32>().ok()).flatten();
    all()
        .find(|b| {
            b.file == r
                || b.file.trim_end_matches(".toml") == r
                || b.short() == r.trim_end_matches(".toml")
                || (number.is_some() && b.number() == number)
        })
        // The name a report or page shows it by, last: a file's name wins.
        .or_else(|| all().find(|b| b.declared_name() == Some(r)))
}

/// A scenario argument as the command line takes it: a file or folder
/// that exists is itself; otherwise a bundled scenario's reference becomes
/// its `bundled:` path; anything else is left for the reader to refuse.
pub fn resolve(argument: &str) -> PathBuf {
    let as_given = PathBuf::from(argument);
    // Anything there (a dangling link, an unreadable file) is the user's:
    // read as given, its problem said, never a bundled one in its place.
    if std::fs::symlink_metadata(&as_given).is_ok() {
        return as_given;
    }
    find(argument).map_or(as_given, |b| b.path())
}

/// [`resolve`], for an argument that may not be UTF-8 (a path as the
/// system gives it): such a path is only ever a path.
pub fn resolve_os(argument: &std::ffi::OsStr) -> PathBuf {
    argument.to_str().map_or_else(|| PathBuf::from(argument), resolve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_scenarios_is_bundled_in_order() {
        let on_disk: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".toml"))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let bundled: Vec<&str> = all().map(|b| b.file).collect();
        assert_eq!(bundled, on_disk);
    }

    #[test]
    fn a_scenario_is_found_by_the_name_its_report_shows() {
        assert_eq!(
            find("shutdown-timeout-kills-stalled-teammate").map(|b| b.file),
            Some("03-stalled-teammate-killed.toml")
        );
        // Every bundled scenario, by the name `run` and `scenarios` show it.
        for b in all() {
            let shown = crate::format::load_str("x", b.text).expect("bundled scenarios load").name;
            assert_eq!(b.declared_name(), Some(shown.as_str()), "{}", b.file);
            assert_eq!(find(&shown).map(|f| f.file), Some(b.file), "{shown}");
        }
    }

    #[test]
    fn a_scenario_is_found_by_number_file_or_short_name() {
        for r in [
            "22",
            "022",
            "22-peer-deadlock",
            "22-peer-deadlock.toml",
            "peer-deadlock",
            "bundled:22-peer-deadlock.toml",
            "scenarios/22-peer-deadlock.toml",
        ] {
            assert_eq!(find(r).map(|b| b.file), Some("22-peer-deadlock.toml"), "{r}");
        }
        assert!(find("999").is_none() && find("peer").is_none() && find("").is_none());
        assert!(find("+22").is_none(), "a number is digits");
        assert_eq!(find("22.toml").map(|b| b.file), Some("22-peer-deadlock.toml"));
        let b = find("1").unwrap();
        assert_eq!((b.file, b.number(), b.short()), ("01-happy-shutdown.toml", Some(1), "happy-shutdown"));
        assert_eq!(by_path(&b.path()).map(|b| b.text), Some(b.text));
    }
}
