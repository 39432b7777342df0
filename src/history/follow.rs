//! What `handshake watch` follows: a Claude Code team folder, a Claude Code
//! lead's transcript, or the reference course's inbox folder. Each look
//! reads the files again and keeps every entry (or line) ever seen, once,
//! whatever the runtime does to the files afterwards: rewrites them whole,
//! flips `read` flags, drains an inbox, deletes the folder. What was kept
//! is judged as `audit` judges the files.

use super::claude::{self, folder, kept::Kept, tasks, transcript};
use super::tail::{Line, Tail, LINE_BOUND};
use super::{inbox, BadLine, History};
use crate::protocol::Millis;
use crate::trace::{Event, RosterStatus};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The most of a folder's files read at each look (as `audit` reads them).
const BOUND: u64 = inbox::MAX_FOLDER_BYTES;
/// The lead's name in a transcript, which does not say it.
const LEAD: &str = "team-lead";

/// What is followed, and all that was kept of it.
pub enum Followed {
    /// A Claude Code team folder, and its tasks as last read (a task file
    /// says where the task is now, not what happened: the latest is kept).
    Team(Kept, Option<tasks::Tasks>),
    /// A Claude Code lead's session transcript, read as it grows.
    Transcript(Kept, Growing),
    /// A reference inbox folder (the folder of `*.jsonl` found under the path).
    Inboxes(PathBuf, KeptLines),
}

impl Followed {
    /// What `path` is, told from its files; `Err` names what was looked for.
    pub fn of(path: &Path) -> Result<Followed, String> {
        if path.is_dir() && folder::is_team_folder(path) {
            return Ok(Followed::Team(Kept::default(), None));
        }
        if path.is_dir() && tasks::is_tasks_folder(path) {
            // Tasks are followed with their team: the team folder's watch
            // reads them, inside it or beside it.
            return Err("this is a Claude Code tasks folder: watch its team folder (~/.claude/teams/<team>), which \
                        reads its tasks too, or audit this folder as it is now"
                .to_string());
        }
        if path.is_dir() {
            return inbox::find(path).map(|dir| Followed::Inboxes(dir, KeptLines::default())).ok_or_else(|| {
                "not a folder to follow: looked for a Claude Code team folder (inboxes/*.json, or config.json with \
                 members) and for the reference course's *.jsonl (in it, or in its .team/inbox, inbox or .mailboxes)"
                    .to_string()
            });
        }
        let pipe = "a pipe cannot be followed: watch reads a file again as it grows; give the file's path (audit \
                    reads a pipe once)";
        let first = first_lines(path).map_err(|e| match e {
            crate::input::ReadError::NotAFile("a pipe") => pipe.to_string(),
            // `<(command)` is a link to a pipe.
            crate::input::ReadError::NotAFile("a symbolic link") if crate::input::is_pipe(path) => pipe.to_string(),
            crate::input::ReadError::NotAFile("a symbolic link") => {
                "a symbolic link: watch follows a regular file, never through a link (another file may be put \
                 where it points); give the file's own path"
                    .to_string()
            }
            e => e.to_string(),
        })?;
        // A session just begun may have written only what comes before its
        // conversation (a snapshot, a queued prompt): audit would find
        // nothing to judge in it, but a watch waits for what comes.
        match transcript::looks_like(&first) || transcript::begins_like(&first) {
            true => Ok(Followed::Transcript(Kept::default(), Growing::default())),
            false => Err("not a Claude Code transcript (one JSON object a line, of type user or assistant): only a \
                          team folder, a transcript or a reference inbox folder can be followed"
                .into()),
        }
    }

    /// What kind of thing is followed, in words.
    pub fn kind(&self) -> &'static str {
        match self {
            Followed::Team(..) => "a Claude Code team folder",
            Followed::Transcript(..) => "a Claude Code lead's transcript",
            Followed::Inboxes(..) => "a reference inbox folder",
        }
    }

    /// Reads `path` again; true if anything new was kept. A folder or file
    /// that is gone reads as nothing new: what was kept stays.
    pub fn look(&mut self, path: &Path) -> bool {
        let files = self.files();
        match self {
            Followed::Team(kept, tasks) => {
                let read_team = || {
                    let reading = folder::read(path, BOUND);
                    let now = tasks::find(path, reading.team.name.as_deref()).map(|dir| tasks::read(&dir, BOUND));
                    (reading, now)
                };
                // An inbox missing from one listing, in a folder still there,
                // is most likely being renamed into place, and one that does
                // not parse was caught half written: either is read again
                // (judged without it, its answers would seem to answer nothing).
                let whole = |(reading, _): &(folder::Reading, _)| {
                    (!kept.misses_a_file(reading) && reading.not_parsed.is_empty()) || !path.is_dir()
                };
                let (mut reading, now) = settled(&files, path, read_team, whole);
                if !path.is_dir() {
                    // The folder is gone (the runtime deletes it when the
                    // session ends): its files are not missing, they were
                    // read. What this look read before it went is kept;
                    // the files it could not find are not problems.
                    reading.unjudged.retain(|(place, _)| folder::entry_place(place).is_some());
                    reading.not_parsed.clear();
                }
                let new_tasks = now.is_some();
                if let Some(now) = now {
                    *tasks = Some(now);
                }
                kept.absorb(reading) | new_tasks
            }
            Followed::Transcript(kept, growing) => {
                let could_not_before = growing.tail.unreadable().map(str::to_string);
                let new = growing.read_on(path).is_some_and(|(new, rewritten)| match rewritten {
                    // Its lines may have moved: what was kept is found again by
                    // what it says, not by its line.
                    true => kept.absorb_rewritten(new),
                    false => kept.absorb(new),
                });
                // A file that turned unreadable, or readable again, is news.
                new | (growing.tail.unreadable() != could_not_before.as_deref())
            }
            Followed::Inboxes(dir, lines) => {
                let (texts, not_read, bounded) = settled(&files, path, || KeptLines::read(dir), |_| true);
                lines.not_read = not_read;
                let changed = lines.absorb(texts);
                lines.bounded = bounded || lines.bytes > BOUND;
                changed
            }
        }
    }

    /// All that was kept, as the history `audit` would judge.
    pub fn history(&self) -> Result<History, BadLine> {
        match self {
            Followed::Team(kept, tasks) => {
                let reading = kept.reading();
                let mut h = claude::history_of(reading);
                if let Some(t) = tasks {
                    claude::with_tasks(&mut h, t, reading);
                }
                Ok(h)
            }
            Followed::Transcript(kept, growing) => {
                let mut h = claude::transcript_of(kept.reading());
                if let Some(why) = growing.tail.unreadable() {
                    let why = format!("could not be read at the last look ({why}): what it holds since was not judged");
                    h.unjudged.push((claude::kept::TRANSCRIPT.into(), why));
                }
                Ok(h)
            }
            Followed::Inboxes(_, lines) => inbox::read_texts(&lines.texts()),
        }
    }

    /// How many tasks the latest look read (a team folder's tasks folder).
    pub fn tasks(&self) -> usize {
        match self {
            Followed::Team(_, Some(t)) => t.tasks.len(),
            _ => 0,
        }
    }

    /// Whether the latest look found an inbox that does not parse (most
    /// likely caught while being written, and left so for a moment): what
    /// was kept then lacks that inbox's entries, and judging it could say a
    /// violation the files never showed.
    pub fn unsettled(&self) -> bool {
        match self {
            Followed::Team(kept, _) => !kept.reading().not_parsed.is_empty(),
            Followed::Transcript(..) | Followed::Inboxes(..) => false,
        }
    }

    /// What the latest look could not read (a link, a file that is not
    /// UTF-8), and why: a reference folder's; a team folder and a
    /// transcript count theirs among the entries not judged.
    pub fn not_read(&self) -> &[String] {
        match self {
            Followed::Inboxes(_, lines) => &lines.not_read,
            Followed::Team(..) | Followed::Transcript(..) => &[],
        }
    }

    /// Whether the latest look stopped at a bound of the files it reads
    /// (the folder's or the tasks folder's bytes or files): what lies past
    /// it was not kept, so the summary cannot be a PASS.
    pub fn bounded(&self) -> bool {
        match self {
            Followed::Team(kept, tasks) => kept.reading().bounded || tasks.as_ref().is_some_and(|t| t.bounded),
            Followed::Inboxes(_, lines) => lines.bounded,
            Followed::Transcript(..) => false,
        }
    }

    /// How many entries (or lines) were kept.
    pub fn len(&self) -> usize {
        match self {
            Followed::Team(kept, _) | Followed::Transcript(kept, _) => kept.len(),
            Followed::Inboxes(_, lines) => lines.count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The files whose last line was still unfinished (no newline) at the
    /// latest look, so not kept: a reference inbox and a transcript are
    /// appended a line at a time. A team folder's inboxes are rewritten whole.
    pub fn unfinished(&self, path: &Path) -> Vec<String> {
        match self {
            Followed::Inboxes(_, lines) => lines.unfinished().to_vec(),
            Followed::Transcript(_, growing) if growing.tail.unfinished() => vec![path.display().to_string()],
            Followed::Team(..) | Followed::Transcript(..) => Vec::new(),
        }
    }

    /// Whether the latest look left lines to read (a transcript already
    /// long when the watch began is read a part at a time): the next look
    /// should come at once.
    pub fn behind(&self) -> bool {
        matches!(self, Followed::Transcript(_, growing) if growing.tail.behind())
    }

    /// A cheap summary of what the files are now (each one's name, size and
    /// time of change): when it is the same, nothing needs reading again.
    pub fn fingerprint(&self, path: &Path) -> u64 {
        self.files().fingerprint(path)
    }

    fn files(&self) -> Files {
        match self {
            // Its tasks may be in a folder named as its config names it.
            Followed::Team(kept, _) => Files::Team(kept.reading().team.name.clone()),
            Followed::Transcript(..) => Files::Transcript,
            Followed::Inboxes(dir, _) => Files::Inboxes(dir.clone()),
        }
    }
}

/// Which files a look reads, for their fingerprint.
enum Files {
    /// A team folder, and the team's name as its config gave it.
    Team(Option<String>),
    Transcript,
    Inboxes(PathBuf),
}

impl Files {
    fn fingerprint(&self, path: &Path) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        let mut stat = |p: &Path| {
            if let Ok(m) = std::fs::symlink_metadata(p) {
                p.hash(&mut h);
                m.len().hash(&mut h);
                m.modified().ok().hash(&mut h);
                // A file renamed into place is a new file, even within the
                // clock's grain and at the same size.
                #[cfg(unix)]
                std::os::unix::fs::MetadataExt::ino(&m).hash(&mut h);
            }
        };
        let each_in = |dir: &Path, stat: &mut dyn FnMut(&Path)| {
            let mut names: Vec<PathBuf> =
                std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
            names.sort();
            names.iter().for_each(|p| stat(p));
        };
        match self {
            Files::Team(name) => {
                stat(&path.join("config.json"));
                each_in(&path.join("inboxes"), &mut stat);
                if let Some(dir) = tasks::find(path, name.as_deref()) {
                    each_in(&dir, &mut stat);
                }
            }
            Files::Transcript => stat(path),
            Files::Inboxes(dir) => each_in(dir, &mut stat),
        }
        h.finish()
    }
}

/// A transcript followed: where the last look stopped, and what the lines
/// read so far left open (the lead's calls still waiting for their results).
#[derive(Default)]
pub struct Growing {
    tail: Tail,
    /// Boxed: a reader is large, and one is followed at a time.
    reader: Option<Box<transcript::Reader>>,
    /// The file was read again from its start, and no line of it has been
    /// taken in since (a look that found it emptied, in the middle of a
    /// rewrite, read nothing): the next lines read are its new lines.
    rewritten: bool,
}

impl Growing {
    /// Reads the lines finished since the last look: what is new, if any
    /// line was, and whether the file was read again from its start (another
    /// file under the name, or a shorter one).
    fn read_on(&mut self, path: &Path) -> Option<(claude::folder::Reading, bool)> {
        let reader = self.reader.get_or_insert_with(|| Box::new(transcript::Reader::new(LEAD)));
        let rewritten = &mut self.rewritten;
        let lines = self.tail.read_on(path, |line| match line {
            // What was kept stays kept; the new file's lines are read afresh.
            Line::NewFile => {
                **reader = transcript::Reader::new(LEAD);
                *rewritten = true;
            }
            Line::Text(text) => reader.line(text),
            Line::Unreadable(why) => reader.skip_line(why),
        });
        (lines > 0).then(|| (reader.take_new(), std::mem::take(&mut self.rewritten)))
    }
}

/// The first lines of the file at `path` that are not blank, as many as
/// [`transcript::looks_like`] reads (at most [`LINE_BOUND`] in all), never
/// through a symbolic link.
pub(crate) fn first_lines(path: &Path) -> Result<String, crate::input::ReadError> {
    use std::io::{BufRead, Read};
    let file = crate::input::open_regular(path)?;
    let mut reader = std::io::BufReader::new(file).take(LINE_BOUND);
    let (mut text, mut line, mut kept, mut n) = (String::new(), Vec::new(), 0, 0);
    // A line that is not UTF-8 is one line the reader will say it could
    // not read (a lead cut off mid-character leaves one last), not a reason
    // to refuse the file; only a file with no other line is refused for it.
    let mut not_utf8 = None;
    while kept < transcript::LOOKED_AT {
        line.clear();
        n += 1;
        match reader.read_until(b'\n', &mut line).map_err(|e| crate::input::ReadError::Io(e.to_string()))? {
            0 => break,
            _ if line.iter().all(u8::is_ascii_whitespace) => continue,
            _ => match std::str::from_utf8(&line) {
                Ok(good) => {
                    text.push_str(good);
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                    kept += 1;
                }
                Err(_) => {
                    not_utf8.get_or_insert(n);
                }
            },
        }
    }
    match not_utf8 {
        Some(line) if kept == 0 => Err(crate::input::ReadError::NotUtf8 { line }),
        _ => Ok(text),
    }
}

/// How many times a look reads files that keep changing under it before
/// it takes what it read, and how long it waits between.
const SETTLE_TRIES: usize = 5;
const SETTLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// What `read` reads, once the files held still across a reading and
/// `whole` finds nothing missing from it. Files are read one by one: a
/// reading taken while the runtime writes may hold a later file without an
/// earlier one (an answer, and not yet the inbox with its request), and
/// would be judged a violation that never was. Files that never settle are
/// read `SETTLE_TRIES` times and the last reading taken: a busy team is
/// still followed.
fn settled<T>(files: &Files, path: &Path, mut read: impl FnMut() -> T, whole: impl Fn(&T) -> bool) -> T {
    let mut before = files.fingerprint(path);
    let mut reading = read();
    for _ in 1..SETTLE_TRIES {
        let after = files.fingerprint(path);
        if after == before && whole(&reading) {
            break;
        }
        before = after;
        std::thread::sleep(SETTLE_PAUSE);
        reading = read();
    }
    reading
}

/// Every line ever seen in a reference inbox folder's `*.jsonl` files, once
/// each, in the order first seen: a drained inbox loses nothing kept. A line
/// that comes again after the first was drained away is taken for it (the
/// files cannot tell the two apart). Only finished lines are kept: a line
/// with no newline yet may be half written (a writer appends a line at a
/// time), and kept half it would never parse.
#[derive(Debug, Default)]
pub struct KeptLines {
    /// Each file's kept lines, one text a file.
    files: BTreeMap<String, String>,
    /// Each line's identity: its file, its text's digest, and which copy of
    /// that text it is in its file.
    seen: HashSet<(String, u64, usize)>,
    count: usize,
    /// The files whose last line had no newline at the latest look.
    unfinished: Vec<String>,
    /// What the latest look could not read, and why.
    not_read: Vec<String>,
    /// The bytes of the lines kept: past [`BOUND`] nothing more is kept.
    bytes: u64,
    /// The latest look stopped at [`BOUND`], read or kept: the files'
    /// bytes in all, as `audit` reads a folder.
    bounded: bool,
}

impl KeptLines {
    /// Each `*.jsonl` file of the folder `dir`: its name and its text; what
    /// was not read (a link, a file that is not UTF-8), and why; and whether
    /// the read stopped at [`BOUND`], the files' bytes in all.
    fn read(dir: &Path) -> (Vec<(String, String)>, Vec<String>, bool) {
        let (files, skipped) = match inbox::listed(dir) {
            Ok(listed) => listed,
            Err(bad) => return (Vec::new(), vec![bad.reason], false),
        };
        let mut not_read: Vec<String> = skipped.into_iter().map(|(_, why)| why).collect();
        let mut texts = Vec::new();
        let mut left = BOUND;
        for path in files {
            let name = path.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned());
            match crate::input::read_regular(&path, left) {
                Ok(text) => {
                    left -= (text.len() as u64).min(left);
                    texts.push((name, text));
                }
                Err(crate::input::ReadError::TooBig { .. }) => {
                    let mib = BOUND >> 20;
                    not_read.push(format!("{name}: not read: past the folder's bound ({mib} MiB read in all)"));
                    return (texts, not_read, true);
                }
                Err(e) => {
                    not_read.push(format!("{name}: not read: {}", e.in_folder("each file is read up to its bound")))
                }
            }
        }
        (texts, not_read, false)
    }

    /// Keeps the lines of `texts` not seen yet; true if any line is new.
    fn absorb(&mut self, texts: Vec<(String, String)>) -> bool {
        let mut changed = false;
        self.unfinished.clear();
        for (name, text) in texts {
            let finished = text.rfind('\n').map_or(0, |end| end + 1);
            if !text[finished..].trim().is_empty() {
                self.unfinished.push(name.clone());
            }
            let text = &text[..finished];
            let mut copies: BTreeMap<u64, usize> = BTreeMap::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let digest = claude::message::digest(line);
                let n = copies.entry(digest).or_default();
                *n += 1;
                if self.bytes > BOUND {
                    // Kept up to the bound; `bounded` says so.
                    break;
                }
                if self.seen.insert((name.clone(), digest, *n)) {
                    self.bytes += line.len() as u64 + 1;
                    let kept = self.files.entry(name.clone()).or_default();
                    kept.push_str(line);
                    kept.push('\n');
                    self.count += 1;
                    changed = true;
                }
            }
        }
        changed
    }

    /// The files whose last line was not finished at the latest look.
    pub fn unfinished(&self) -> &[String] {
        &self.unfinished
    }

    /// The kept lines as inbox files' texts, sorted by name.
    pub fn texts(&self) -> Vec<(String, String)> {
        self.files.iter().map(|(n, t)| (n.clone(), t.clone())).collect()
    }
}

/// What a status line shows: each agent (and whether it has ended), and
/// each request still open with how long it has been open.
#[derive(Debug, PartialEq)]
pub struct Status {
    pub agents: Vec<(String, bool)>,
    pub open: Vec<(String, Millis)>,
}

/// The most open requests a status line names; past them, a count.
const OPEN_SHOWN: usize = 4;

/// The agents a status line names; the rest are counted.
const AGENTS_SHOWN: usize = 8;

impl Status {
    /// The status of history `h`, `since` after its last entry.
    pub fn of(h: &History, since: Millis) -> Status {
        let mut ended = vec![false; h.names.agents.len()];
        let mut open: Vec<(crate::protocol::RequestId, Millis)> = Vec::new();
        for e in &h.events {
            match &e.event {
                Event::Status { agent, status } => {
                    if let Some(x) = ended.get_mut(agent.index()) {
                        *x = matches!(status, RosterStatus::Shutdown);
                    }
                }
                Event::Respawn { agent } => {
                    if let Some(x) = ended.get_mut(agent.index()) {
                        *x = false;
                    }
                }
                Event::Opened { id, .. } => open.push((*id, e.t)),
                Event::Verdict { request_id, .. } => open.retain(|o| o.0 != *request_id),
                Event::Expired { id, .. } => open.retain(|o| o.0 != *id),
                _ => {}
            }
        }
        let end = h.ended_at.0.saturating_add(since.0);
        Status {
            agents: h.names.agents.iter().cloned().zip(ended).collect(),
            open: open
                .into_iter()
                .map(|(id, t)| {
                    let label = h.names.labels.get(&id).map_or_else(|| id.to_string(), |l| l.to_string());
                    (label, Millis(end.saturating_sub(t.0)))
                })
                .collect(),
        }
    }

    /// One line: `agents: team-lead, alice, bob (ended) · open: [shutdown-1@bob] 12s`.
    pub fn line(&self) -> String {
        let mut agents: Vec<String> = self
            .agents
            .iter()
            .take(AGENTS_SHOWN)
            .map(|(n, ended)| if *ended { format!("{n} (ended)") } else { n.clone() })
            .collect();
        // A team of thousands on one line would fill the screen at each redraw.
        if self.agents.len() > AGENTS_SHOWN {
            agents.push(format!("and {} more", self.agents.len() - AGENTS_SHOWN));
        }
        let mut open: Vec<String> = self
            .open
            .iter()
            .take(OPEN_SHOWN)
            .map(|(label, age)| format!("[{label}] {}", whole_seconds(*age)))
            .collect();
        if self.open.len() > OPEN_SHOWN {
            open.push(format!("and {} more", self.open.len() - OPEN_SHOWN));
        }
        let open = if open.is_empty() { "none".to_string() } else { open.join(", ") };
        format!("agents: {} · open: {open}", agents.join(", "))
    }
}

/// A request's age as a person reads it at a glance: whole seconds.
fn whole_seconds(age: Millis) -> String {
    Millis(age.0 / 1000 * 1000).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference inbox's request and its answer.
    const ASK: &str = r#"{"type":"shutdown_request","from":"lead","request_id":"abcd1234","timestamp":1.0}"#;
    const YES: &str =
        r#"{"type":"shutdown_response","from":"bob","request_id":"abcd1234","approve":true,"timestamp":2.0}"#;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("handshake-follow-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_drained_reference_inbox_loses_nothing_kept_and_a_second_copy_counts() {
        let d = dir("drain");
        let (ask, yes) = (ASK, YES);
        std::fs::write(d.join("bob.jsonl"), format!("{ask}\n")).unwrap();
        let mut f = Followed::of(&d).expect("a reference folder");
        assert_eq!(f.kind(), "a reference inbox folder");
        assert!(f.look(&d));
        assert!(!f.look(&d), "nothing new the second time");
        // bob drains his inbox; the lead receives the answer, twice.
        std::fs::write(d.join("bob.jsonl"), "").unwrap();
        std::fs::write(d.join("lead.jsonl"), format!("{yes}\n{yes}\n")).unwrap();
        assert!(f.look(&d));
        assert_eq!(f.len(), 3);
        let h = f.history().expect("judged");
        let opened = h.events.iter().filter(|e| matches!(e.event, Event::Opened { .. })).count();
        assert_eq!(opened, 1, "the drained request is still there");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_line_still_being_written_is_kept_only_once_it_is_finished() {
        let d = dir("half");
        let (ask, yes) = (ASK, YES);
        std::fs::write(d.join("bob.jsonl"), format!("{ask}\n")).unwrap();
        std::fs::write(d.join("lead.jsonl"), &yes[..30]).unwrap();
        let mut f = Followed::of(&d).expect("a reference folder");
        assert!(f.look(&d));
        assert_eq!((f.len(), f.unfinished(&d)), (1, vec!["lead.jsonl".to_string()]));
        assert!(f.history().is_ok(), "the half line is not kept");
        std::fs::write(d.join("lead.jsonl"), format!("{yes}\n")).unwrap();
        assert!(f.look(&d));
        assert_eq!((f.len(), f.unfinished(&d).len()), (2, 0));
        let h = f.history().expect("judged");
        assert!(h.events.iter().any(|e| matches!(e.event, Event::Verdict { .. })), "the answer is judged");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_transcript_is_read_on_from_where_the_last_look_stopped_and_kept_as_audit_reads_it() {
        let d = dir("transcript");
        let path = d.join("session.jsonl");
        let call = r#"{"type":"assistant","sessionId":"s","timestamp":"2026-04-09T17:27:03.068Z","message":{"content":[{"type":"tool_use","id":"t1","name":"SendMessage","input":{"to":"bob","message":{"type":"shutdown_request","reason":"done"}}}]}}"#;
        let result = r#"{"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:03.200Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"{\"success\":true,\"request_id\":\"shutdown-1@bob\"}"}]}}"#;
        let answer = r#"{"type":"user","sessionId":"s","timestamp":"2026-04-09T17:27:05.000Z","message":{"content":"<teammate-message teammate_id=\"bob\">\n{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1@bob\",\"from\":\"bob\"}\n</teammate-message>"}}"#;
        let append = |s: &str| {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut f, s.as_bytes()).unwrap();
        };
        // The call in one look, its result half written.
        append(&format!("{call}\n{}", &result[..40]));
        let mut f = Followed::of(&path).expect("a transcript");
        assert!(f.look(&path));
        assert_eq!((f.len(), f.unfinished(&path).len()), (1, 1));
        // Its result and the answer in the next: the request learns its id.
        append(&format!("{}\n\nnot json\n{answer}\n", &result[40..]));
        assert!(f.look(&path));
        assert!(!f.look(&path), "nothing new");
        assert!(f.unfinished(&path).is_empty());
        let whole = std::fs::read_to_string(&path).unwrap();
        let audit = claude::transcript_of(&transcript::read(&whole, LEAD));
        let watched = f.history().expect("judged");
        assert_eq!(watched.events, audit.events, "kept as audit reads the whole file");
        assert_eq!(watched.unjudged, vec![("line 4".to_string(), "not a JSON object".to_string())]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn the_fingerprint_changes_with_a_file_and_only_then() {
        let d = dir("print");
        std::fs::create_dir_all(d.join("inboxes")).unwrap();
        std::fs::write(d.join("inboxes/bob.json"), "[]").unwrap();
        let f = Followed::of(&d).expect("a team folder");
        let a = f.fingerprint(&d);
        assert_eq!(a, f.fingerprint(&d));
        std::fs::write(d.join("inboxes/amy.json"), "[]").unwrap();
        assert_ne!(a, f.fingerprint(&d));
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_reading_the_files_changed_under_is_read_again() {
        let d = dir("settle");
        std::fs::create_dir_all(d.join("inboxes")).unwrap();
        std::fs::write(d.join("inboxes/team-lead.json"), "[]").unwrap();
        // The first reading lists the folder, then the runtime writes bob's
        // inbox and the lead's answer before the reading is done.
        let mut reads = 0;
        let reading = settled(
            &Files::Team(None),
            &d,
            || {
                reads += 1;
                let listed = std::fs::read_dir(d.join("inboxes")).unwrap().count();
                if reads == 1 {
                    std::fs::write(d.join("inboxes/bob.json"), "[1]").unwrap();
                    std::fs::write(d.join("inboxes/.t"), "[2]").unwrap();
                    std::fs::rename(d.join("inboxes/.t"), d.join("inboxes/team-lead.json")).unwrap();
                }
                listed
            },
            |_| true,
        );
        assert_eq!((reads, reading), (2, 2), "read again, and both inboxes seen");
        // Files that hold still are read once.
        let mut again = 0;
        settled(&Files::Team(None), &d, || again += 1, |_| true);
        assert_eq!(again, 1);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_status_line_names_ended_agents_and_open_requests_with_their_age() {
        let s = Status {
            agents: vec![("team-lead".into(), false), ("bob".into(), true)],
            open: (1..=6).map(|n| (format!("shutdown-{n}@amy"), Millis(n * 1500))).collect(),
        };
        assert_eq!(
            s.line(),
            "agents: team-lead, bob (ended) · open: [shutdown-1@amy] 1s, [shutdown-2@amy] 3s, [shutdown-3@amy] 4s, \
             [shutdown-4@amy] 6s, and 2 more"
        );
        let none = Status { agents: vec![("team-lead".into(), false)], open: vec![] };
        assert_eq!(none.line(), "agents: team-lead · open: none");
        // A hostile review: 200,000 agents made a status line of 2 MB.
        let many = Status { agents: (0..200_000).map(|n| (format!("bob{n}"), false)).collect(), open: vec![] };
        assert_eq!(many.line(), "agents: bob0, bob1, bob2, bob3, bob4, bob5, bob6, bob7, and 199992 more · open: none");
    }

    #[test]
    fn what_cannot_be_followed_says_what_was_looked_for() {
        let d = dir("neither");
        let why = Followed::of(&d).err().expect("refused");
        assert!(why.contains("inboxes/*.json") && why.contains("*.jsonl"), "{why}");
        std::fs::write(d.join("notes.txt"), "hello\n").unwrap();
        let why = Followed::of(&d.join("notes.txt")).err().expect("refused");
        assert!(why.contains("not a Claude Code transcript"), "{why}");
        // A tasks folder is named for what it is (a Claude Code user's review).
        let tasks = d.join("tasks");
        std::fs::create_dir_all(&tasks).unwrap();
        std::fs::write(
            tasks.join("1.json"),
            r#"{"id":"1","subject":"s","status":"pending","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let why = Followed::of(&tasks).err().expect("refused");
        assert!(why.contains("this is a Claude Code tasks folder: watch its team folder"), "{why}");
        let _ = std::fs::remove_dir_all(d);
    }
}
