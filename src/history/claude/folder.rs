//! A Claude Code team folder, `~/.claude/teams/<team>/`: `config.json` (the
//! team) and `inboxes/<agent>.json` (each a JSON array the runtime rewrites
//! whole), read into entries. Written against Claude Code 2.1.x (see
//! docs/claude-code.md for the versions and the evidence of each shape).
//!
//! Nothing here guesses: an entry that is not an object, a `text` that is
//! JSON this reader does not know, a time it cannot read, is kept as
//! unjudged with its place and reason; a field it does not use is counted
//! and named, never fatal.

use super::message::{self, Said};
use crate::history::stamp::{self, Stamp};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The fields of an inbox entry this reader uses.
const ENTRY_FIELDS: &[&str] = &["from", "text", "timestamp", "read", "color", "summary", MSG_ID];

/// The shape a reading counts for entries that carry `msg_id` (Claude Code
/// 2.1.220 and later, which deletes an entry once delivered).
pub const MSG_ID: &str = "msg_id";

/// The team as `config.json` describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Team {
    pub name: Option<String>,
    /// The lead's name: `leadAgentId` up to its `@` (`team-lead`).
    pub lead: Option<String>,
    /// Each member's name, in the file's order, and whether it must have
    /// its plan approved first (`planModeRequired`).
    pub members: Vec<(String, bool)>,
    /// Some member could not be read: `members` is not the whole team, so
    /// a name missing from it may be that member's.
    pub members_in_part: bool,
}

/// One message a file shows its owner received.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Where it is: `inboxes/alice.json[3]` (entries counted from 1).
    pub origin: String,
    pub at: Stamp,
    pub from: String,
    /// The file's owner: whoever's inbox it is in.
    pub to: String,
    pub said: Said,
    /// The message's text as written, digested: two different messages that
    /// read as the same `said` (two lines of prose) are never one delivered
    /// twice.
    pub digest: u64,
    /// The runtime's `read` flag (set when it queues the entry, not when the
    /// agent sees it).
    pub read: Option<bool>,
}

/// An entry's place, `inboxes/bob.json[3]`, as its file and its number in
/// it; `None` for a place that names no entry (a file, a transcript's
/// line). The number is the last `[N]`: a file's own name may hold `[`.
pub fn entry_place(place: &str) -> Option<(&str, usize)> {
    let (file, rest) = place.rsplit_once('[')?;
    Some((file, rest.strip_suffix(']')?.parse().ok()?))
}

/// What the folder held, as read.
#[derive(Clone, Debug, Default)]
pub struct Reading {
    pub team: Team,
    pub entries: Vec<Entry>,
    /// Entries (or files) it could not interpret: where, and why.
    pub unjudged: Vec<(String, String)>,
    /// Fields it met and does not use, with how often.
    pub unused_fields: BTreeMap<String, usize>,
    /// The shapes it read, by their written `type` (and, for a transcript,
    /// the form of the lead's SendMessage calls), with how often: the
    /// generation of Claude Code that wrote them is told from these.
    pub shapes: BTreeMap<&'static str, usize>,
    /// The inbox files that did not parse as JSON: a file caught while
    /// being written reads so too, which a watch reads again.
    pub not_parsed: Vec<String>,
    /// The read stopped at the folder's bound: entries or a file past it
    /// were counted, not read (a verdict on the rest is a bounded one).
    pub bounded: bool,
    /// Entries a watch saw unread that a later look found gone from their
    /// file, its other entries there (a whole-file rewrite lost them:
    /// claude-code#53896). Only a watch sees them: one reading cannot.
    /// Each by its place, sender, digest and time: another entry may now
    /// be at its place.
    pub lost: Vec<(String, String, u64, i64)>,
}

/// The folder's `inboxes/`, if `dir` is a Claude Code team folder (it holds
/// `inboxes/*.json`, or `config.json` with `members`).
pub fn is_team_folder(dir: &Path) -> bool {
    let inboxes = dir.join("inboxes");
    let has_json = std::fs::read_dir(&inboxes)
        .is_ok_and(|mut r| r.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))));
    has_json || config_of(dir).is_some_and(|c| c.get("members").is_some())
}

fn config_of(dir: &Path) -> Option<Map<String, Value>> {
    read_config(dir).ok()
}

/// The team's `config.json` as an object, or why it is not one.
fn read_config(dir: &Path) -> Result<Map<String, Value>, String> {
    let text = crate::input::read_regular(&dir.join("config.json"), 16 << 20).map_err(|e| match e {
        crate::input::ReadError::NotAFile(what) => format!("{what}: only regular files inside the folder are read"),
        e => e.to_string(),
    })?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(not_json(&text, &e)),
    }
}

/// Why `text` does not parse, `e`: a byte-order mark first is named, as
/// the parser's "expected value at line 1 column 1" does not say it.
pub(crate) fn not_json(text: &str, e: &serde_json::Error) -> String {
    if text.starts_with('\u{feff}') {
        return "not JSON: it starts with a byte-order mark (U+FEFF), which JSON does not allow".into();
    }
    // The runtime rewrites a file whole: one read mid-write is empty or
    // ends mid-value, which is not corruption.
    const AGAIN: &str = "as a file read while the runtime rewrites it does (a later read may find it whole)";
    if text.trim().is_empty() {
        return format!("empty, {AGAIN}");
    }
    if e.is_eof() {
        return format!("not JSON: {e}: it ends mid-value, {AGAIN}");
    }
    format!("not JSON: {e}")
}

/// Reads the team folder `dir`: its config, then every inbox file in name
/// order, each entry in the file's order. `limit` bounds the inbox files'
/// bytes in all (a file that would pass it is not read, and said so). Only
/// regular files inside the folder are read: a link is skipped and said so.
pub fn read(dir: &Path, limit: u64) -> Reading {
    let mut r = Reading::default();
    match read_config(dir) {
        Ok(c) => r.team = team(&c, &mut r.unjudged),
        Err(why) if std::fs::symlink_metadata(dir.join("config.json")).is_ok() => {
            r.unjudged.push(("config.json".into(), format!("{why}: the team's roster is unknown")))
        }
        // Claude Code writes one for every team: without it, every name
        // is taken as a member and none as needing its plan approved.
        Err(_) => r.unjudged.push((
            "config.json".into(),
            "no config.json: the team's roster is unknown (every name is taken as a member, none as needing its plan \
             approved)"
                .into(),
        )),
    }
    // The folder's own inboxes only: a link to a folder elsewhere is not read.
    if std::fs::symlink_metadata(dir.join("inboxes")).is_ok_and(|m| m.file_type().is_symlink()) {
        let why = "a symbolic link: only the team folder's own inboxes are read; skipped";
        r.unjudged.push(("inboxes".into(), why.into()));
        return r;
    }
    // A folder with no inboxes to list has had no message read: said, so
    // that no verdict stands on the files it could not see.
    let mut files: Vec<(PathBuf, bool)> = match std::fs::read_dir(dir.join("inboxes")) {
        Ok(d) => d.flatten().map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_symlink()))).collect(),
        Err(e) => {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "no inboxes/ folder: no message was read".to_string(),
                _ => format!("cannot list the folder ({e}): no message was read"),
            };
            r.unjudged.push(("inboxes".into(), why));
            Vec::new()
        }
    };
    files.sort();
    files.retain(|(p, _)| inbox_file(p, &mut r.unjudged));
    let mut left = limit;
    // Each entry counts as at least this many bytes of the bound, as a
    // reference inbox's line does: a file of ten million `0,` is 20 MB and
    // was ten million entries kept, several GB. Past it, entries are
    // counted and said, not kept.
    let mut entries_left = usize::try_from(limit / ENTRY_COST).unwrap_or(usize::MAX);
    for (path, link) in files {
        let stem = path.file_stem().unwrap_or_default();
        let Some(owner) = stem.to_str().map(str::to_string) else {
            // Decoded with replacement characters, two such names could read as one agent.
            let why = "a file name that is not UTF-8: whose inbox it is cannot be told; skipped";
            r.unjudged.push((format!("inboxes/{}.json", stem.to_string_lossy()), why.into()));
            continue;
        };
        let shown = format!("inboxes/{owner}.json");
        if link {
            let why = "a symbolic link: only regular files inside the folder are read; skipped";
            r.unjudged.push((shown, why.into()));
            continue;
        }
        match crate::input::read_regular(&path, left) {
            Ok(text) => {
                left -= text.len() as u64;
                inbox(&mut r, &owner, &shown, &text, &mut entries_left)
            }
            Err(e) => {
                r.bounded |= matches!(e, crate::input::ReadError::TooBig { .. });
                r.unjudged.push((
                    shown,
                    e.in_folder(&format!("the folder's inbox files are read up to {limit} bytes in all")),
                ))
            }
        }
    }
    r
}

/// Whether `path`, in `inboxes/`, is an inbox file (`<agent>.json`). The
/// runtime's locks (`<agent>.json.lock`, a file or a folder) are passed
/// over; anything else is said not read, so that an inbox saved under
/// another name (`alice.JSON`, `alice.jsonl`) never passes unseen.
fn inbox_file(path: &Path, unjudged: &mut Vec<(String, String)>) -> bool {
    if path.extension().is_some_and(|x| x == "json") {
        return true;
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if !name.ends_with(".json.lock") {
        let why = "not an inbox file (the runtime writes inboxes/<agent>.json): not read";
        unjudged.push((format!("inboxes/{name}"), why.into()));
    }
    false
}

/// The team `config.json` describes; what of it could not be read is
/// said in `unjudged` (a roster read in part would judge a send to a
/// member left out as a send to nobody).
fn team(c: &Map<String, Value>, unjudged: &mut Vec<(String, String)>) -> Team {
    let mut said = |place: String, why: &str| unjudged.push((place, format!("{why}: the team's roster is unknown")));
    let lead = match c.get("leadAgentId") {
        None => None,
        Some(Value::String(id)) => Some(id.split('@').next().unwrap_or(id).to_string()),
        Some(_) => {
            said("config.json leadAgentId".into(), "not a string");
            None
        }
    };
    let mut members = Vec::new();
    let mut in_part = false;
    match c.get("members") {
        // Every Claude Code 2.1 config has one: one without it is another
        // shape (the roster under another key), and a send to a name not
        // in the team would go unsaid.
        None => said("config.json members".into(), "no \"members\" list"),
        Some(Value::Array(ms)) => {
            for (i, m) in ms.iter().enumerate() {
                match m.as_object().and_then(|m| Some((m.get("name")?.as_str()?, m))) {
                    Some((name, m)) => members
                        .push((name.to_string(), m.get("planModeRequired").and_then(Value::as_bool).unwrap_or(false))),
                    None => {
                        in_part = true;
                        said(format!("config.json, member {}", i + 1), "a member with no \"name\" string")
                    }
                }
            }
        }
        Some(_) => said("config.json members".into(), "not a list of members"),
    }
    let name = c.get("name").and_then(Value::as_str).map(str::to_string);
    Team { name, lead, members, members_in_part: in_part }
}

/// One inbox file: a JSON array of entries, read one entry at a time (a
/// lead's inbox may hold tens of thousands, and as one `Value` the array
/// would take several times the file's size). A file that turns out not to
/// be JSON part way through gives no entries, as if parsed whole.
fn inbox(r: &mut Reading, owner: &str, shown: &str, text: &str, entries_left: &mut usize) {
    if !text.trim_start().starts_with('[') {
        let why = match serde_json::from_str::<Value>(text) {
            Ok(_) => "not a JSON array of entries".to_string(),
            Err(e) => not_json(text, &e),
        };
        r.unjudged.push((shown.to_string(), why));
        r.not_parsed.push(shown.to_string());
        return;
    }
    let (entries, unjudged) = (r.entries.len(), r.unjudged.len());
    let mut tally = Tally::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let left_before = *entries_left;
    let each = Each { r: &mut *r, tally: &mut tally, owner, shown, left: entries_left };
    match serde::Deserializer::deserialize_seq(&mut de, each).and_then(|past| de.end().map(|()| past)) {
        Ok(past) => {
            if past > 0 {
                r.bounded = true;
                let why = format!(
                    "{} past the bound (each entry counts as at least {ENTRY_COST} bytes of the {} MiB the folder's \
                     inbox files are read up to): counted, not read",
                    crate::words::plural(past as u64, "entry"),
                    crate::history::inbox::MAX_FOLDER_BYTES >> 20
                );
                r.unjudged.push((shown.to_string(), why));
            }
            for (k, n) in tally.unused {
                *r.unused_fields.entry(k).or_default() += n;
            }
            for (shape, n) in tally.shapes {
                *r.shapes.entry(shape).or_default() += n;
            }
        }
        Err(e) => {
            r.entries.truncate(entries);
            r.unjudged.truncate(unjudged);
            *entries_left = left_before;
            r.unjudged.push((shown.to_string(), not_json(text, &e)));
            r.not_parsed.push(shown.to_string());
        }
    }
}

/// What one file's entries hold besides themselves, counted apart until
/// the whole file has been read.
#[derive(Default)]
struct Tally {
    unused: BTreeMap<String, usize>,
    shapes: BTreeMap<&'static str, usize>,
}

/// Takes an inbox file's entries as the parser meets them, while the
/// folder's bound has room (`left`); the rest are counted, not kept.
struct Each<'a> {
    r: &'a mut Reading,
    tally: &'a mut Tally,
    owner: &'a str,
    shown: &'a str,
    left: &'a mut usize,
}

/// The least an inbox entry counts for against the folder's bound.
const ENTRY_COST: u64 = 128;

impl<'de> serde::de::Visitor<'de> for Each<'_> {
    /// The entries past the bound.
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON array of entries")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0;
        while *self.left > 0 {
            let Some(v) = seq.next_element::<Value>()? else { return Ok(0) };
            i += 1;
            *self.left -= 1;
            one(self.r, self.tally, self.owner, format!("{}[{i}]", self.shown), &v);
        }
        let mut past = 0;
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
            past += 1;
        }
        Ok(past)
    }
}

/// One entry of an inbox file, at `origin`.
fn one(r: &mut Reading, tally: &mut Tally, owner: &str, origin: String, v: &Value) {
    let Value::Object(m) = v else {
        r.unjudged.push((origin, "an entry that is not a JSON object".into()));
        return;
    };
    for k in m.keys().filter(|k| !ENTRY_FIELDS.contains(&k.as_str())) {
        *tally.unused.entry(format!("entry.{k}")).or_default() += 1;
    }
    if m.contains_key("msg_id") {
        *tally.shapes.entry(MSG_ID).or_default() += 1;
    }
    match entry(m, owner, &origin) {
        Ok((e, shape, after)) => {
            if let Some(shape) = shape {
                *tally.shapes.entry(shape).or_default() += 1;
            }
            if let Said::Unknown { reason } = &e.said {
                r.unjudged.push((origin, reason.clone()));
            } else if let Some(after) = after {
                // A transcript's delivered body may carry prose after the
                // JSON; an inbox's text is one or the other.
                let why = format!(
                    "a JSON message followed by other text ({:?}), which Claude Code does not write in an inbox: \
                     judged as the JSON, the rest not read",
                    after
                );
                r.unjudged.push((origin, why));
            } else if e.read.is_none() {
                // Every entry Claude Code writes has one: a file without
                // it is of a shape half-known, and never a clean pass.
                let why = "no \"read\" flag, which Claude Code writes on every entry: read as delivered, which the \
                           file does not say";
                r.unjudged.push((origin, why.into()));
            }
            r.entries.push(e);
        }
        Err(reason) => r.unjudged.push((origin, reason)),
    }
}

/// An entry, the shape its text was read as, and the text after its JSON, if any.
type Read = (Entry, Option<&'static str>, Option<String>);

fn entry(m: &Map<String, Value>, owner: &str, origin: &str) -> Result<Read, String> {
    // Missing and of another kind are told apart: "no text" for a text
    // written as an object sent its reader looking for the wrong mistake.
    let string = |key: &str, missing: &str| -> Result<&str, String> {
        match m.get(key) {
            None => Err(missing.to_string()),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!("its \"{key}\" is not a string")),
        }
    };
    let from = string("from", "no \"from\": the sender is unknown")?;
    let text = string("text", "no \"text\"")?;
    // A flag that is not true or false cannot say whether the entry was
    // delivered; taken as delivered it was judged as if it were.
    let read = match m.get("read") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err("its \"read\" is not true or false: whether it was delivered is unknown".into()),
    };
    let at = stamp::read(m.get("timestamp").ok_or("no \"timestamp\"")?)?;
    let (said, shape, after) = message::read_with_rest(text);
    // Its start, enough to recognise it.
    let after = after.map(|rest| match crate::words::cut_bytes(rest, 40) {
        cut if cut.len() < rest.len() => format!("{cut}…"),
        _ => rest.to_string(),
    });
    let e = Entry {
        origin: origin.to_string(),
        at,
        from: from.to_string(),
        to: owner.to_string(),
        said,
        digest: message::digest(text),
        read,
    };
    Ok((e, shape, after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Kind;

    fn folder(files: &[(&str, &str)]) -> PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("handshake-cc-folder-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_team_folder_reads_its_roster_and_each_inbox_entry_with_its_place() {
        let config = r#"{"name":"t","leadAgentId":"team-lead@t","createdAt":1,"members":[{"agentId":"team-lead@t","name":"team-lead"},{"agentId":"alice@t","name":"alice","planModeRequired":true,"tmuxPaneId":"%3"}]}"#;
        let alice = r#"[{"from":"team-lead","text":"{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-1@alice\",\"from\":\"team-lead\",\"timestamp\":\"2026-03-01T10:00:00.000Z\"}","timestamp":"2026-03-01T10:00:00.001Z","read":true},
            {"from":"team-lead","text":"hello","timestamp":"2026-03-01T10:00:01.000Z","read":false,"pinned":true},
            7,
            {"from":"bob","text":"{\"type\":\"join_request\"}","timestamp":"2026-03-01T10:00:02.000Z","read":false}]"#;
        let dir = folder(&[("config.json", config), ("inboxes/alice.json", alice), ("inboxes/team-lead.json", "{}")]);
        assert!(is_team_folder(&dir));
        let r = read(&dir, 1 << 20);
        assert_eq!(r.team.lead.as_deref(), Some("team-lead"));
        assert_eq!(r.team.members, vec![("team-lead".to_string(), false), ("alice".to_string(), true)]);
        assert_eq!(r.entries.len(), 3);
        assert_eq!(r.entries[0].origin, "inboxes/alice.json[1]");
        assert_eq!(r.entries[0].to, "alice");
        assert!(matches!(r.entries[0].said, Said::Request { kind: Kind::Shutdown, .. }));
        assert_eq!(r.entries[1].said, Said::Plain);
        let unjudged: Vec<&str> = r.unjudged.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(unjudged, ["inboxes/alice.json[3]", "inboxes/alice.json[4]", "inboxes/team-lead.json"]);
        assert_eq!(r.unused_fields.get("entry.pinned"), Some(&1));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A roster, for folders whose test is about something else: a folder
    /// with none says so (see `read`).
    const ROSTER: &str = r#"{"name":"t","leadAgentId":"team-lead@t","members":[{"name":"team-lead"}]}"#;

    #[cfg(unix)]
    #[test]
    fn inbox_files_whose_names_are_not_utf8_are_skipped_not_merged_into_one_agent() {
        use std::os::unix::ffi::OsStrExt;
        let entry = r#"[{"from":"team-lead","text":"hi","timestamp":"2026-03-01T10:00:00.000Z","read":true}]"#;
        let dir = folder(&[("config.json", ROSTER), ("inboxes/alice.json", entry)]);
        for name in [&b"x\xff\xfe.json"[..], &b"x\xfe\xff.json"[..]] {
            std::fs::write(dir.join("inboxes").join(std::ffi::OsStr::from_bytes(name)), entry).unwrap();
        }
        let r = read(&dir, 1 << 20);
        assert_eq!(r.entries.len(), 1, "alice's entry only");
        assert_eq!(r.unjudged.len(), 2, "{:?}", r.unjudged);
        assert!(r.unjudged.iter().all(|(_, why)| why.contains("not UTF-8")), "{:?}", r.unjudged);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_entrys_place_is_its_file_and_the_last_number_whatever_the_files_name_holds() {
        assert_eq!(entry_place("inboxes/bob.json[3]"), Some(("inboxes/bob.json", 3)));
        assert_eq!(entry_place("inboxes/bob[2].json[13]"), Some(("inboxes/bob[2].json", 13)));
        assert_eq!(entry_place("inboxes/bob[2].json"), None);
        assert_eq!(entry_place("line 12"), None);
        assert_eq!(crate::history::claude::witness::shown("inboxes/bob[2].json[13]"), "inboxes/bob[2].json:13");
    }

    #[test]
    fn inboxes_that_cannot_be_listed_and_a_roster_read_in_part_are_said_not_passed_over() {
        let unjudged =
            |r: &Reading| -> Vec<String> { r.unjudged.iter().map(|(w, why)| format!("{w}: {why}")).collect() };
        let config = r#"{"leadAgentId":7,"members":[{"name":"team-lead"},{"agentId":"bob@t"},{"name":["alice"]}]}"#;
        let dir = folder(&[("config.json", config)]);
        let r = read(&dir, 1 << 20);
        assert_eq!(r.team.members, vec![("team-lead".to_string(), false)]);
        assert_eq!(r.team.lead, None);
        let said = unjudged(&r);
        assert_eq!(said.len(), 4, "{said:?}");
        assert!(said[0].starts_with("config.json leadAgentId: not a string"), "{said:?}");
        assert!(said[1].starts_with("config.json, member 2: a member with no \"name\""), "{said:?}");
        assert!(said[2].starts_with("config.json, member 3: "), "{said:?}");
        assert_eq!(said[3], "inboxes: no inboxes/ folder: no message was read");
        let _ = std::fs::remove_dir_all(dir);

        let dir = folder(&[("config.json", r#"{"members":{"alice":{"name":"alice"}}}"#), ("inboxes", "not a folder")]);
        let said = unjudged(&read(&dir, 1 << 20));
        assert!(said[0].starts_with("config.json members: not a list of members"), "{said:?}");
        assert!(said[1].starts_with("inboxes: cannot list the folder ("), "{said:?}");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A hostile review: a file saved with a byte-order mark was "expected
    /// value at line 1 column 1", which does not say what is wrong.
    #[test]
    fn a_byte_order_mark_is_named() {
        let entry = r#"[{"from":"team-lead","text":"hi","timestamp":"2026-03-01T10:00:00.000Z","read":true}]"#;
        let dir = folder(&[
            ("config.json", &format!("\u{feff}{ROSTER}")),
            ("inboxes/alice.json", &format!("\u{feff}{entry}")),
        ]);
        let r = read(&dir, 1 << 20);
        let said: Vec<&str> = r.unjudged.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(said, ["config.json", "inboxes/alice.json"]);
        assert!(r.unjudged.iter().all(|(_, why)| why.contains("byte-order mark (U+FEFF)")), "{:?}", r.unjudged);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_that_breaks_part_way_gives_no_entries_as_if_parsed_whole() {
        let good = r#"{"from":"team-lead","text":"hi","timestamp":"2026-03-01T10:00:00.000Z","read":true,"pinned":1}"#;
        let broken = format!("[{good}, {good}, {{\"from\": 3");
        let trailing = format!("[{good}] and more");
        let dir = folder(&[
            ("config.json", ROSTER),
            ("inboxes/alice.json", broken.as_str()),
            ("inboxes/bob.json", trailing.as_str()),
            ("inboxes/carol.json", &format!("  [{good}, 7]  ")),
        ]);
        let r = read(&dir, 1 << 20);
        let whole = |t: &str| serde_json::from_str::<Value>(t).unwrap_err().to_string();
        let unjudged: Vec<(&str, &str)> = r.unjudged.iter().map(|(w, why)| (w.as_str(), why.as_str())).collect();
        assert_eq!(
            unjudged,
            [
                // Cut short, as a file caught mid-rewrite is: said so.
                (
                    "inboxes/alice.json",
                    format!(
                        "not JSON: {}: it ends mid-value, as a file read while the runtime rewrites it does (a later \
                         read may find it whole)",
                        whole(&broken)
                    )
                    .as_str()
                ),
                ("inboxes/bob.json", format!("not JSON: {}", whole(&trailing)).as_str()),
                ("inboxes/carol.json[2]", "an entry that is not a JSON object"),
            ]
        );
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].origin, "inboxes/carol.json[1]");
        assert_eq!(r.unused_fields.get("entry.pinned"), Some(&1), "counted only in the file that was read");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn two_different_lines_of_prose_at_one_time_are_not_one_delivered_twice() {
        let at = "2026-03-01T10:00:00.000Z";
        let one = format!(r#"{{"from":"bob","text":"parser done","timestamp":"{at}","read":true}}"#);
        let two = format!(r#"{{"from":"bob","text":"tests done","timestamp":"{at}","read":true}}"#);
        let dir = folder(&[("inboxes/team-lead.json", &format!("[{one}, {two}, {two}]"))]);
        let h = crate::history::claude::history_of(&read(&dir, 1 << 20));
        let repeats: Vec<String> = h
            .events
            .iter()
            .filter_map(|e| match &e.event {
                crate::trace::Event::Alert { text, .. } if text.contains("repeats") => Some(text.clone()),
                _ => None,
            })
            .collect();
        // Both read as prose; only the third, the second's copy, is a repeat.
        assert_eq!(repeats, ["inboxes/team-lead.json[3] repeats inboxes/team-lead.json[2]: the same sender, message and time, delivered again (claude-code#92244)"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn repeats_past_the_first_twenty_are_counted_in_one_alert_not_said_one_by_one() {
        let at = "2026-03-01T10:00:00.000Z";
        let one = format!(r#"{{"from":"bob","text":"tests done","timestamp":"{at}","read":true}}"#);
        let dir = folder(&[("inboxes/team-lead.json", &format!("[{}]", vec![one; 50].join(",")))]);
        let h = crate::history::claude::history_of(&read(&dir, 1 << 20));
        let alerts: Vec<String> = h
            .events
            .iter()
            .filter_map(|e| match &e.event {
                crate::trace::Event::Alert { text, .. } if text.contains("repeat") => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(alerts.len(), 21, "{alerts:#?}");
        assert!(
            alerts[19].starts_with("inboxes/team-lead.json[21] repeats inboxes/team-lead.json[1]"),
            "{}",
            alerts[19]
        );
        assert!(alerts[20].starts_with("and 29 more repeated entries"), "{}", alerts[20]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
