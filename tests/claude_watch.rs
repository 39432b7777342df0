//! `handshake watch` fed each Claude Code fixture entry by entry, the way the
//! runtime writes (issue 40, point 4): every inbox rewritten whole (written
//! beside it, then renamed), an entry first unread then flipped to read, the
//! folder deleted when the session ends; a transcript appended line by line.
//! Each violation the entries so far show (judged here through the library)
//! must be printed before the next entry is written, and the summary must
//! give the verdict `audit` gives the fixture.

use handshake::history::claude::{self, folder, transcript};
use handshake::oracle::{check_log, Log};
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code");
/// How long a violation may take to be printed after the entry that shows it.
const SAY_WITHIN: Duration = Duration::from_secs(3);

/// What a history breaks, as watch prints it: the invariant and the place.
fn broken(h: &handshake::history::History) -> Vec<(String, String)> {
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    check_log(&log, &h.policy, &h.require_plan)
        .iter()
        .map(|v| {
            let place = v
                .event
                .map(|i| match h.origin.get(i) {
                    Some(file) if !file.is_empty() => format!("{file}:{}", h.lines[i]),
                    _ => format!("line {}", h.lines[i]),
                })
                .unwrap_or_default();
            (v.invariant.to_string(), place)
        })
        .collect()
}

/// A running `handshake watch PATH`, its output a line at a time.
struct Watch {
    child: std::process::Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(path: &Path) -> Watch {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["watch", &path.display().to_string(), "--interval", "100ms", "--color", "never"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("watch starts");
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut w = Watch { child, lines, seen: Vec::new() };
        w.wait_for(|l| l.starts_with("watching"), Duration::from_secs(10), "its first line");
        w
    }

    /// Waits for a line that `wanted` accepts; panics after `within`.
    fn wait_for(&mut self, wanted: impl Fn(&str) -> bool, within: Duration, what: &str) -> String {
        if let Some(l) = self.seen.iter().find(|l| wanted(l)) {
            return l.clone();
        }
        let until = Instant::now() + within;
        while let Ok(line) = self.lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
            self.seen.push(line.clone());
            if wanted(&line) {
                return line;
            }
        }
        panic!("watch did not say {what} within {within:?}; it said:\n{}", self.seen.join("\n"));
    }

    /// Each violation in `now` and not in `before` printed, within
    /// `SAY_WITHIN`; how many there were.
    fn says_new(&mut self, before: &[(String, String)], now: &[(String, String)], case: &str, step: usize) -> usize {
        let new: Vec<&(String, String)> = now.iter().filter(|v| !before.contains(v)).collect();
        for (invariant, place) in &new {
            let head = format!("✗ invariant {invariant} —");
            let what = format!("{case}, entry {step}: {head} … {place}");
            self.wait_for(|l| l.starts_with(&head) && l.ends_with(place.as_str()), SAY_WITHIN, &what);
        }
        new.len()
    }

    /// Ctrl-C, then the summary line and the exit status; every line said.
    fn stop(mut self) -> (String, Option<i32>, Vec<String>) {
        // SAFETY: sending SIGINT to a child process this test started.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let end = self.wait_for(|l| l.contains(" kept"), Duration::from_secs(30), "its summary");
        (end, self.child.wait().unwrap().code(), self.seen)
    }
}

/// `handshake audit PATH`'s verdict word (PASS or FAIL), and what it says
/// of the tasks (its `⚠ tasks…` lines).
fn audit_verdict(path: &Path) -> (String, Vec<String>) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["audit", &path.display().to_string(), "--color", "never"])
        .output()
        .expect("audit runs");
    let out = String::from_utf8_lossy(&out.stdout);
    let tasks = out.lines().map(str::trim).filter(|l| l.starts_with("⚠ tasks")).map(String::from).collect();
    (out.split_whitespace().next().unwrap_or_default().to_string(), tasks)
}

/// A fixture's inbox entries as written, each with its file, in the order
/// the runtime wrote them (by time; a file's own order for equal times).
fn entries_of(dir: &Path) -> Vec<(String, Value, i64)> {
    let mut all = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("inboxes")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&std::fs::read_to_string(&f).unwrap()) else {
            continue;
        };
        for item in items {
            let ms =
                item.get("timestamp").and_then(|t| handshake::history::stamp::read(t).ok()).map_or(i64::MAX, |s| s.ms);
            all.push((name.clone(), item, ms));
        }
    }
    all.sort_by_key(|(_, _, ms)| *ms);
    all
}

/// Writes `entries` as inbox `name`, whole: beside it, then renamed.
fn rewrite(dir: &Path, name: &str, entries: &[Value]) {
    let tmp = dir.join(format!("inboxes/.{name}.tmp"));
    std::fs::write(&tmp, serde_json::to_string(entries).unwrap()).unwrap();
    std::fs::rename(tmp, dir.join("inboxes").join(name)).unwrap();
}

/// Feeds the team folder fixture `case` to watch entry by entry.
fn feed_folder(case: &str) {
    let fixture = Path::new(FIXTURES).join(case);
    let root = std::env::temp_dir().join(format!("handshake-watch-{case}-{}", std::process::id()));
    let dir = root.join(case);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    std::fs::copy(fixture.join("config.json"), dir.join("config.json")).unwrap();
    // The tasks as they stand (a task file is the task's state now).
    if let Ok(tasks) = std::fs::read_dir(fixture.join("tasks")) {
        std::fs::create_dir_all(dir.join("tasks")).unwrap();
        for t in tasks.map(|t| t.unwrap().path()) {
            std::fs::copy(&t, dir.join("tasks").join(t.file_name().unwrap())).unwrap();
        }
    }
    let entries = entries_of(&fixture);
    let mut w = Watch::start(&dir);
    let mut files: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    let mut before = Vec::new();
    let mut said = 0;
    for (step, (name, entry, _)) in entries.iter().enumerate() {
        let kept = files.entry(name.clone()).or_default();
        if entry.get("read") == Some(&Value::Bool(true)) {
            // Queued unread first, then flipped when the runtime hands it over.
            let mut unread = entry.clone();
            unread["read"] = Value::Bool(false);
            kept.push(unread);
            rewrite(&dir, name, kept);
            kept.pop();
        }
        kept.push(entry.clone());
        rewrite(&dir, name, kept);
        let now = broken(&claude::history_of(&folder::read(&dir, 64 << 20)));
        said += w.says_new(&before, &now, case, step + 1);
        before = now;
    }
    // The session ends: the runtime deletes the team folder. Not in the
    // same millisecond as its last write (the watch cannot keep what it
    // never had the time to read): after a few of the watch's intervals.
    std::thread::sleep(Duration::from_millis(600));
    std::fs::remove_dir_all(&dir).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (end, code, lines) = w.stop();
    let (verdict, tasks) = audit_verdict(&fixture);
    assert!(end.starts_with(&verdict), "{case}: audit says {verdict}, watch's summary: {end}");
    for t in &tasks {
        assert!(lines.contains(t), "{case}: watch did not say {t}: {lines:#?}");
    }
    let broken_at_end = broken(&claude::history_of(&folder::read(&fixture, 64 << 20)));
    assert!(said >= broken_at_end.len(), "{case}: {said} violations said as they came, {broken_at_end:?} at the end");
    assert_eq!(said > 0, verdict == "FAIL", "{case}: {said} violations said as they came");
    let kept =
        format!("({} kept", if entries.len() == 1 { "1 entry".into() } else { format!("{} entries", entries.len()) });
    assert!(end.contains(&kept), "{case}: every entry kept though the folder is gone: {end}");
    assert_eq!(code, Some(130), "{case}: stopped by Ctrl-C");
    let _ = std::fs::remove_dir_all(&root);
}

/// Feeds the transcript fixture `name` to watch a line at a time, appended.
fn feed_transcript(name: &str) {
    let fixture = Path::new(FIXTURES).join("transcripts").join(name);
    let text = std::fs::read_to_string(&fixture).unwrap();
    let root = std::env::temp_dir().join(format!("handshake-watch-t-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let path = root.join(name);
    let mut lines = text.lines();
    let mut so_far = format!("{}\n", lines.next().unwrap());
    std::fs::write(&path, &so_far).unwrap();
    let mut w = Watch::start(&path);
    let mut before = broken(&claude::transcript_of(&transcript::read(&so_far, "team-lead")));
    let mut said = w.says_new(&[], &before, name, 1);
    for (step, line) in lines.enumerate() {
        so_far.push_str(line);
        so_far.push('\n');
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()).unwrap();
        drop(f);
        let now = broken(&claude::transcript_of(&transcript::read(&so_far, "team-lead")));
        said += w.says_new(&before, &now, name, step + 2);
        before = now;
    }
    let (end, code, _) = w.stop();
    let (verdict, _) = audit_verdict(&fixture);
    assert!(end.starts_with(&verdict), "{name}: audit says {verdict}, watch's summary: {end}");
    assert_eq!(said > 0, verdict == "FAIL", "{name}: {said} violations said as they came");
    assert_eq!(code, Some(130));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn watch_gives_every_team_fixture_its_audit_verdict_saying_each_violation_before_the_next_entry() {
    let mut cases: Vec<String> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("config.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    assert!(cases.len() >= 9, "the clean team and one folder for each of eight reports: {cases:?}");
    for case in &cases {
        feed_folder(case);
    }
}

#[test]
fn watch_gives_every_transcript_fixture_its_audit_verdict_saying_each_violation_before_the_next_line() {
    for name in ["clean-lead.jsonl", "81464-lead.jsonl"] {
        feed_transcript(name);
    }
}

/// Every file under `dir` (recursively) with its bytes and time of change.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap()) {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap(), p.metadata().unwrap().modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn watch_only_reads_a_team_folder_a_transcript_and_a_reference_folder() {
    let root = std::env::temp_dir().join(format!("handshake-watch-reads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let copy = |from: &Path, to: &Path| {
        let status = std::process::Command::new("cp").arg("-r").arg(from).arg(to).status().expect("cp runs");
        assert!(status.success());
    };
    std::fs::create_dir_all(&root).unwrap();
    copy(&Path::new(FIXTURES).join("tasks-blocked-cycle"), &root.join("team"));
    copy(&Path::new(FIXTURES).join("transcripts"), &root.join("transcripts"));
    let reference = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reference/approval-flipped");
    copy(Path::new(reference), &root.join("reference"));
    let trace = std::env::temp_dir().join(format!("handshake-watch-reads-{}.jsonl", std::process::id()));
    for (followed, watched) in [
        ("team", root.join("team")),
        ("transcripts", root.join("transcripts/81464-lead.jsonl")),
        ("reference", root.join("reference")),
    ] {
        let before = snapshot(&root.join(followed));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["watch", &watched.display().to_string(), "--interval", "100ms", "--for", "1500ms"])
            .args(["--trace", &trace.display().to_string(), "--color", "never"])
            .output()
            .expect("watch runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains(" kept"), "{followed}: {said}");
        assert_eq!(snapshot(&root.join(followed)), before, "{followed}: nothing written, nothing touched");
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_file(&trace);
}

/// A hostile review (2026-12-05): a watch kept every entry a busy team ever
/// wrote, 506 MB after 40 s and growing; and `--trace` naming a folder was
/// found out only when the watch ended. Past `--max-entries` the watch now
/// stops, judged, exit 3; a folder for `--trace` is refused before it starts.
#[test]
fn a_watch_stops_judged_past_its_bound_and_a_folder_is_no_trace() {
    let watch = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args([
                "watch",
                &format!("{FIXTURES}/clean-team"),
                "--interval",
                "100ms",
                "--for",
                "20s",
                "--color",
                "never",
            ])
            .args(extra)
            .output()
            .expect("watch runs")
    };
    let started = Instant::now();
    let out = watch(&["--max-entries", "3"]);
    let (said, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{said}\n{stderr}");
    // Judged, and not a PASS: entries past the bound were not (a later
    // review: a bounded read never reads PASS, as audit's does not).
    assert!(said.contains("STOPPED  ") && said.contains("12 entries kept"), "the summary judges what was kept: {said}");
    assert!(!said.contains("PASS"), "{said}");
    assert!(stderr.contains("past --max-entries 3"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20), "it stopped at the bound, not at --for");
    let out = watch(&["--trace", &std::env::temp_dir().display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("it is a folder") && stderr.contains("nothing was watched"), "{stderr}");
}

/// A hostile review: a watch's summary said "1 invariant broken; 1 entry
/// not judged" and named neither (a summary read alone, after the live
/// lines scrolled away, must), and a watch that kept nothing to judge
/// ended PASS, exit 0, though docs/claude-code.md says exit 2.
#[test]
fn the_summary_names_what_broke_and_what_was_not_judged_and_nothing_kept_is_no_pass() {
    let root = std::env::temp_dir().join(format!("handshake-watch-summary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let team = root.join("team");
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    let case = Path::new(FIXTURES).join("81464-teammate-shutdown-kills-the-lead");
    for f in std::fs::read_dir(case.join("inboxes")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, team.join("inboxes").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(case.join("config.json"), team.join("config.json")).unwrap();
    std::fs::write(team.join("inboxes/zed.json"), "[{\"from\":").unwrap();
    let watch = |dir: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["watch", &dir.display().to_string(), "--for", "1s", "--color", "never"])
            .output()
            .unwrap()
    };
    let out = watch(&team);
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = &text[text.find("FAIL  ").unwrap_or_else(|| panic!("a FAIL summary: {text}"))..];
    assert!(summary.contains("? inboxes/zed.json: not JSON"), "{summary}");
    assert!(
        summary.contains("✗ invariant matching-response — ") && summary.contains("[inboxes/team-lead.json[2]]"),
        "{summary}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");

    let empty = root.join("empty");
    std::fs::create_dir_all(empty.join("inboxes")).unwrap();
    std::fs::write(empty.join("inboxes/alice.json"), "[]").unwrap();
    let out = watch(&empty);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("no message was kept to judge") && !text.contains("PASS"), "{text}");
    // No verdict at all: not a FAIL of the team (a Claude Code user's review).
    assert!(text.contains("NONE  ") && !text.contains("FAIL"), "{text}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A read-through (issue 45's left-out list): a transcript rewritten with
/// its lines shifted (a line put before them, in place or renamed into
/// place) was kept twice, every entry under its old line and its new one,
/// and judged as sent twice. What was kept is found again by what it says;
/// a line appended after is still new.
#[test]
fn a_transcript_rewritten_with_its_lines_moved_is_kept_once() {
    use handshake::history::follow::Followed;
    let fixture = std::fs::read_to_string(Path::new(FIXTURES).join("transcripts/clean-lead.jsonl")).unwrap();
    let lines: Vec<&str> = fixture.lines().collect();
    let dir = std::env::temp_dir().join(format!("handshake-watch-moved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lead.jsonl");
    let first = lines[..6].join("\n") + "\n";
    let audit = |text: &str| broken(&claude::transcript_of(&transcript::read(text, "team-lead")));
    let kept_after = |followed: &mut Followed, text: &str, in_place: bool| {
        if in_place {
            std::fs::write(&path, text).unwrap();
        } else {
            std::fs::write(dir.join("new"), text).unwrap();
            std::fs::rename(dir.join("new"), &path).unwrap();
        }
        followed.look(&path);
        followed.len()
    };
    for in_place in [true, false] {
        std::fs::write(&path, &first).unwrap();
        let mut followed = Followed::of(&path).expect("a transcript");
        followed.look(&path);
        let once = followed.len();
        assert!(once > 0, "the first six lines hold entries");
        // The same lines after one the session wrote first (its own talk).
        let system = r#"{"type":"system","sessionId":"5f0c1d2e-0000-4000-8000-000000000001","uuid":"00000000-0000-4000-8000-000000000000","timestamp":"2026-04-09T17:27:13.000Z"}"#;
        let moved = format!("{system}\n{first}");
        assert_eq!(kept_after(&mut followed, &moved, in_place), once, "in place: {in_place}: kept once");
        let h = followed.history().expect("a history");
        let replaced = h.unjudged.iter().any(|(p, _)| p == handshake::history::claude::kept::TRANSCRIPT);
        assert!(!replaced, "in place: {in_place}: lines moved, none lost: {:?}", h.unjudged);
        let whole = format!("{moved}{}\n", lines[6..].join("\n"));
        let all = kept_after(&mut followed, &whole, in_place);
        assert!(all > once, "in place: {in_place}: the lines after are new");
        let h = followed.history().expect("a history");
        assert_eq!(broken(&h), audit(&whole), "in place: {in_place}: audit's verdict on the file as it is");
        let fresh = Followed::of(&path).map(|mut f| {
            f.look(&path);
            f.len()
        });
        assert_eq!(fresh.ok(), Some(all), "in place: {in_place}: as many as one look at the file now");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A transcript replaced during a watch by a file that lacks what was kept
/// (another session's, under the same name) was merged with it without a
/// word, and the mix judged as one history. The entries not found again
/// are now counted and said, so the verdict is no clean bill; lines only
/// moved are not.
#[test]
fn a_transcript_replaced_by_another_is_said_to_mix_two_files() {
    use handshake::history::claude::kept::TRANSCRIPT;
    use handshake::history::follow::Followed;
    let clean = std::fs::read_to_string(Path::new(FIXTURES).join("transcripts/clean-lead.jsonl")).unwrap();
    let other = std::fs::read_to_string(Path::new(FIXTURES).join("transcripts/81464-lead.jsonl")).unwrap();
    let dir = std::env::temp_dir().join(format!("handshake-watch-replaced-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lead.jsonl");
    std::fs::write(&path, &clean).unwrap();
    let mut followed = Followed::of(&path).expect("a transcript");
    followed.look(&path);
    let kept = followed.len();
    let note = |f: &Followed| {
        let h = f.history().expect("a history");
        h.unjudged.iter().find(|(place, _)| place == TRANSCRIPT).map(|(_, why)| why.clone())
    };
    assert_eq!(note(&followed), None, "one file: nothing to say");
    std::fs::write(dir.join("new"), &other).unwrap();
    std::fs::rename(dir.join("new"), &path).unwrap();
    assert!(followed.look(&path), "the other file's entries are new");
    let why = note(&followed).expect("the mix is said");
    assert!(why.contains(&format!("{kept} entries kept from before are not in it")), "{why}");
    // The watch says it as it goes, and its summary is no PASS.
    std::fs::write(&path, &clean).unwrap();
    let watch = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &path.display().to_string(), "--for", "4s", "--interval", "100ms", "--color", "never"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("watch runs");
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::write(dir.join("new"), &other).unwrap();
    std::fs::rename(dir.join("new"), &path).unwrap();
    let out = watch.wait_with_output().expect("watch ends");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("? transcript: the file was replaced or rewritten during the watch"), "{said}");
    assert!(!said.contains("PASS  "), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a transcript that a link took the place of (or that
/// lost its read permission) during a watch was passed over without a
/// word, and the watch said a bare PASS of what it read before, though the
/// file the link reaches breaks an invariant. What cannot be read is said,
/// and said no more once it can be.
#[cfg(unix)]
#[test]
fn a_transcript_that_turns_unreadable_is_said() {
    use handshake::history::claude::kept::TRANSCRIPT;
    use handshake::history::follow::Followed;
    let clean = std::fs::read_to_string(Path::new(FIXTURES).join("transcripts/clean-lead.jsonl")).unwrap();
    let dir = std::env::temp_dir().join(format!("handshake-watch-unreadable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lead.jsonl");
    std::fs::write(&path, &clean).unwrap();
    let mut followed = Followed::of(&path).expect("a transcript");
    followed.look(&path);
    let note = |f: &Followed| {
        let h = f.history().expect("a history");
        h.unjudged.iter().find(|(place, _)| place == TRANSCRIPT).map(|(_, why)| why.clone())
    };
    assert_eq!(note(&followed), None);
    std::fs::write(dir.join("other.jsonl"), &clean).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("other.jsonl", &path).unwrap();
    assert!(followed.look(&path), "news: the file cannot be read");
    let why = note(&followed).expect("said");
    assert!(why.contains("a symbolic link is under its name now") && why.contains("was not judged"), "{why}");
    assert!(!followed.look(&path), "said once, not news at every look");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, &clean).unwrap();
    followed.look(&path);
    assert_eq!(note(&followed), None, "readable again");
    // Gone is not unreadable: nothing is there to read.
    std::fs::remove_file(&path).unwrap();
    followed.look(&path);
    assert_eq!(note(&followed), None, "gone");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a transcript already long when the watch began was
/// read whole in one look before `--max-entries` was looked at (a million
/// lines held 960 MB with `--max-entries 1000`). It is read a part at a
/// time, the bound looked at between parts.
#[test]
fn a_long_transcript_is_read_a_part_at_a_time_within_max_entries() {
    let dir = std::env::temp_dir().join(format!("handshake-watch-long-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lead.jsonl");
    let line = |i: usize| {
        format!(
            r#"{{"type":"user","sessionId":"s","timestamp":"2026-04-09T17:{:02}:{:02}.000Z","message":{{"content":"<teammate-message teammate_id=\"bob{i}\">\nhi\n</teammate-message>"}}}}"#,
            i / 60 % 60,
            i % 60
        )
    };
    let lines = handshake::history::tail::LINES_A_LOOK * 2 + 10;
    std::fs::write(&path, (0..lines).map(|i| line(i) + "\n").collect::<String>()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &path.display().to_string(), "--for", "60s", "--max-entries", "1000", "--color", "never"])
        .output()
        .expect("watch runs");
    let (said, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{said}\n{stderr}");
    let kept = format!("({} entries kept", handshake::history::tail::LINES_A_LOOK);
    assert!(said.contains("STOPPED  ") && said.contains(&kept), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: the trace of a reference folder's watch left out the
/// file the watch could not read, so `audit` of it said a clean PASS where
/// the watch had said "1 file not read".
#[test]
fn a_reference_folders_trace_keeps_the_files_not_read() {
    let dir = std::env::temp_dir().join(format!("handshake-watch-ref-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("ref")).unwrap();
    let request = r#"{"type":"shutdown_request","from":"lead","request_id":"abcd1234","timestamp":1.0}"#;
    let answer = r#"{"type":"shutdown_response","from":"bob","request_id":"abcd1234","approve":true,"timestamp":2.0}"#;
    std::fs::write(dir.join("ref/bob.jsonl"), format!("{request}\n")).unwrap();
    std::fs::write(dir.join("ref/lead.jsonl"), format!("{answer}\n")).unwrap();
    std::fs::write(dir.join("ref/alice.jsonl"), b"\xff{\"x\":1}\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_handshake");
    let (folder, trace) = (dir.join("ref"), dir.join("r.jsonl"));
    let (folder, trace) = (folder.to_str().unwrap(), trace.to_str().unwrap());
    let watched = std::process::Command::new(bin)
        .args(["watch", folder, "--for", "300ms", "--interval", "100ms", "--trace", trace, "--color", "never"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&watched.stdout);
    assert!(said.contains("1 file not read"), "{said}");
    let audited = std::process::Command::new(bin).args(["audit", trace, "--color", "never"]).output().unwrap();
    let said = String::from_utf8_lossy(&audited.stdout);
    assert!(said.contains("? alice.jsonl: not read: line 1 is not UTF-8") && said.contains("no clean bill"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a watch begun with the session (its transcript only
/// a history snapshot so far) was refused as no transcript; a link to the
/// transcript, and `<(command)`, were both told to give "a pipe such as
/// <(command)", which watch refuses too.
#[cfg(unix)]
#[test]
fn a_fresh_session_is_followed_and_a_link_is_told_what_to_give() {
    let dir = std::env::temp_dir().join(format!("handshake-watch-fresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.jsonl");
    let snapshot = r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#;
    std::fs::write(&path, format!("{snapshot}\n")).unwrap();
    let bin = env!("CARGO_BIN_EXE_handshake");
    let watch = |p: &Path| {
        std::process::Command::new(bin)
            .args(["watch", p.to_str().unwrap(), "--for", "200ms", "--color", "never"])
            .output()
            .unwrap()
    };
    let fresh = watch(&path);
    let said = String::from_utf8_lossy(&fresh.stdout);
    assert!(said.contains("a Claude Code lead's transcript"), "{said}{}", String::from_utf8_lossy(&fresh.stderr));
    std::os::unix::fs::symlink("s.jsonl", dir.join("link.jsonl")).unwrap();
    let linked = watch(&dir.join("link.jsonl"));
    let said = String::from_utf8_lossy(&linked.stderr);
    assert_eq!(linked.status.code(), Some(2), "{said}");
    assert!(said.contains("give the file's own path") && !said.contains("<(command)"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a team whose tasks are in `~/.claude/tasks/<name>`,
/// its config's name for it rather than its folder's, had its tasks read
/// at the first look and never again: the look that tells a change (the
/// files' sizes and times) looked for them under the folder's name.
#[test]
fn tasks_found_by_the_teams_name_are_followed_as_they_change() {
    let root = std::env::temp_dir().join(format!("handshake-watch-named-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let team = root.join("teams/foo");
    let tasks = root.join("tasks/bar");
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    let clean = Path::new(FIXTURES).join("clean-team");
    let config = std::fs::read_to_string(clean.join("config.json")).unwrap();
    std::fs::write(team.join("config.json"), config.replacen("\"name\": \"clean\"", "\"name\": \"bar\"", 1)).unwrap();
    for f in ["alice.json", "bob.json", "team-lead.json"] {
        std::fs::copy(clean.join("inboxes").join(f), team.join("inboxes").join(f)).unwrap();
    }
    let cycle = Path::new(FIXTURES).join("tasks-blocked-cycle/tasks");
    std::fs::copy(cycle.join("1.json"), tasks.join("1.json")).unwrap();
    let watch = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", team.to_str().unwrap(), "--for", "3s", "--interval", "100ms", "--color", "never"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("watch runs");
    std::thread::sleep(Duration::from_millis(1200));
    for f in ["2.json", "3.json", "4.json"] {
        std::fs::copy(cycle.join(f), tasks.join(f)).unwrap();
    }
    let out = watch.wait_with_output().expect("watch ends");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("wait on each other (blockedBy)"), "{said}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A review from real reports: a watch saw bob's approval unread in the
/// lead's inbox, then a whole-file rewrite left it out (#53896), and the
/// watch called it "in flight" and the request "never answered", as if the
/// files could not show the loss. The watch saw it: the entry is lost, and
/// no-silent-loss says so. Where the runtime deletes entries as it
/// delivers them (msg_id), gone says nothing.
#[test]
fn an_unread_entry_a_rewrite_left_out_is_lost_to_the_watch() {
    use handshake::history::follow::Followed;
    let dir = std::env::temp_dir().join(format!("handshake-watch-lost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let config = r#"{"name":"f","leadAgentId":"team-lead@f","members":[{"name":"team-lead"},{"name":"bob"}]}"#;
    std::fs::write(dir.join("config.json"), config).unwrap();
    let request = r#"[{"from":"team-lead","text":"{\"type\":\"shutdown_request\",\"requestId\":\"shutdown-1@bob\",\"from\":\"team-lead\"}","timestamp":"2026-04-09T17:27:10.000Z","read":true}]"#;
    std::fs::write(dir.join("inboxes/bob.json"), request).unwrap();
    let approval = r#"{"from":"bob","text":"{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1@bob\",\"from\":\"bob\"}","timestamp":"2026-04-09T17:27:11.000Z","read":false}"#;
    let other = r#"{"from":"bob","text":"tests pass","timestamp":"2026-04-09T17:27:11.100Z","read":false}"#;
    let lead = dir.join("inboxes/team-lead.json");
    for msg_id in [false, true] {
        let with = |entry: &str| {
            if msg_id {
                entry.replacen("\"from\"", "\"msg_id\":\"m1\",\"from\"", 1)
            } else {
                entry.to_string()
            }
        };
        std::fs::write(&lead, format!("[{}]", with(approval))).unwrap();
        let mut followed = Followed::of(&dir).expect("a team folder");
        followed.look(&dir);
        std::fs::write(&lead, format!("[{}]", with(other))).unwrap();
        followed.look(&dir);
        let h = followed.history().expect("a history");
        let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
        let broken: Vec<String> =
            check_log(&log, &h.policy, &h.require_plan).iter().map(|v| v.invariant.to_string()).collect();
        let alerts: Vec<String> = h
            .events
            .iter()
            .filter_map(|e| match &e.event {
                handshake::trace::Event::Alert { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect();
        let said = alerts.iter().any(|a| a.contains("a whole-file rewrite lost it, and team-lead never had it"));
        if msg_id {
            assert!(!said && broken.is_empty(), "msg_id: delivered entries are deleted: {alerts:?} {broken:?}");
            // Deleted is delivered in that generation: its request was
            // answered (a review: "never answered" on every healthy team).
            assert!(!alerts.iter().any(|a| a.contains("never answered")), "{alerts:?}");
        } else {
            assert!(said, "{alerts:?}");
            assert_eq!(broken, ["no-silent-loss"], "{alerts:?}");
            // Its request was answered; the answer did not arrive. Not
            // "never answered" as well (the last notes' left-out list).
            assert!(!alerts.iter().any(|a| a.contains("never answered")), "{alerts:?}");
            let answered = "was answered (inboxes/team-lead.json[1]), but the answer never reached team-lead";
            assert!(alerts.iter().any(|a| a.contains(answered)), "{alerts:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review of the fix above: a rewrite in place is written as a
/// truncation, then the new text; a look between the two read nothing, and
/// the next one read the moved lines as new (12 entries kept for 6, a false
/// FAIL). The file read again from its start is remembered until its lines
/// are read.
#[test]
fn a_transcript_emptied_then_rewritten_is_kept_once() {
    use handshake::history::follow::Followed;
    let fixture = std::fs::read_to_string(Path::new(FIXTURES).join("transcripts/clean-lead.jsonl")).unwrap();
    let dir = std::env::temp_dir().join(format!("handshake-watch-emptied-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lead.jsonl");
    std::fs::write(&path, &fixture).unwrap();
    let mut followed = Followed::of(&path).expect("a transcript");
    followed.look(&path);
    let once = followed.len();
    std::fs::write(&path, "").unwrap();
    followed.look(&path);
    let system = r#"{"type":"system","sessionId":"5f0c1d2e-0000-4000-8000-000000000001","uuid":"00000000-0000-4000-8000-000000000000","timestamp":"2026-04-09T17:27:13.000Z"}"#;
    let moved = format!("{system}\n{fixture}");
    std::fs::write(&path, &moved).unwrap();
    followed.look(&path);
    assert_eq!(followed.len(), once, "kept once");
    let h = followed.history().expect("a history");
    assert_eq!(broken(&h), broken(&claude::transcript_of(&transcript::read(&moved, "team-lead"))));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a team folder read up to its 64 MiB bound gave watch a
/// PASS and exit 0, where audit of the same folder says STOPPED and exits 3.
#[test]
fn a_watch_of_a_folder_read_up_to_its_bound_reads_stopped_and_exits_3() {
    let dir = std::env::temp_dir().join(format!("handshake-watch-bound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let stamp = "2026-02-01T10:00:00.000Z";
    let lead = format!(r#"[{{"from":"alice","text":"hello","timestamp":"{stamp}","read":true}}]"#);
    std::fs::write(dir.join("inboxes/team-lead.json"), lead).unwrap();
    // 600,000 entries of at least 128 bytes each: past the 64 MiB bound.
    std::fs::write(dir.join("inboxes/zed.json"), format!("[{}]", vec!["0"; 600_000].join(","))).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["watch", &dir.display().to_string(), "--for", "1s", "--interval", "100ms", "--color", "never"])
        .output()
        .expect("watch runs");
    let (said, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{said}\n{stderr}");
    assert!(said.contains("STOPPED  ") && !said.contains("PASS"), "{said}");
    assert!(stderr.contains("up to their bound"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Claude Code user's review: a watch ended by SIGTERM or SIGHUP
/// (`timeout`, `kill`, a closed tmux pane) or by its reader going away
/// (`watch … | head -1`) died with no summary and no --trace, though the
/// trace is all a session leaves once the runtime deletes the folder.
#[cfg(unix)]
#[test]
fn a_watch_ended_by_term_hup_or_its_reader_leaving_still_writes_its_trace() {
    let root = std::env::temp_dir().join(format!("handshake-watch-ended-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let start = |trace: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["watch", &format!("{FIXTURES}/clean-team"), "--interval", "100ms", "--for", "60s"])
            .args(["--color", "never", "--trace", &trace.display().to_string()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("watch starts")
    };
    for (signal, name) in [(libc::SIGTERM, "term"), (libc::SIGHUP, "hup")] {
        let trace = root.join(format!("{name}.jsonl"));
        let mut child = start(&trace);
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(first.starts_with("watching"), "{first}");
        // SAFETY: sending a signal to a child process this test started.
        unsafe {
            libc::kill(child.id() as libc::pid_t, signal);
        }
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(130), "{name}: {rest}");
        assert!(rest.contains("PASS  ") && rest.contains("12 entries kept"), "{name}: the summary: {rest}");
        assert_eq!(audit_verdict(&trace).0, "PASS", "{name}: the trace was written whole");
    }
    // The reader reads the first lines and goes away, once the watch has
    // nothing more to say (off a terminal it writes only what changes).
    let trace = root.join("pipe.jsonl");
    let mut child = start(&trace);
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("agents:") {
        line.clear();
        out.read_line(&mut line).unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(out);
    let started = Instant::now();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "its reader gone, the watch ends as interrupted");
    assert!(started.elapsed() < Duration::from_secs(30), "it ended when its reader left, not at --for");
    assert_eq!(audit_verdict(&trace).0, "PASS", "the trace was written whole");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: the alert that an inbox is past the size
/// where the runtime stops showing entries was printed again for every
/// entry after it ("holds 1065 entries", "1066", …), though watch says each
/// alert once.
#[test]
fn a_large_inbox_is_said_once_however_many_entries_follow() {
    let root = std::env::temp_dir().join(format!("handshake-watch-large-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("inboxes")).unwrap();
    let fixture = Path::new(FIXTURES).join("63684-lead-inbox-of-1065-entries");
    for f in ["config.json", "inboxes/alice.json", "inboxes/team-lead.json"] {
        std::fs::copy(fixture.join(f), root.join(f)).unwrap();
    }
    let mut watch = Watch::start(&root);
    watch.wait_for(|l| l.contains("holds 1065 entries"), Duration::from_secs(10), "the large inbox");
    let lead = root.join("inboxes/team-lead.json");
    let Value::Array(mut entries) = serde_json::from_str(&std::fs::read_to_string(&lead).unwrap()).unwrap() else {
        panic!("an inbox is an array")
    };
    for _ in 0..3 {
        let mut more = entries.last().unwrap().clone();
        more["text"] = Value::String("one more report".into());
        entries.push(more);
        rewrite(&root, "team-lead.json", &entries);
        std::thread::sleep(Duration::from_millis(400));
    }
    let (_, _, said) = watch.stop();
    let large: Vec<&String> = said.iter().filter(|l| l.contains("team-lead.json holds ")).collect();
    assert_eq!(large.len(), 1, "said once: {large:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A fresh copy of the clean team's config and inboxes at `dir` (no
/// tasks, no notes); the fixture's folder.
fn clean_team_at(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    let clean = Path::new(FIXTURES).join("clean-team");
    std::fs::copy(clean.join("config.json"), dir.join("config.json")).unwrap();
    for f in ["alice.json", "bob.json", "team-lead.json"] {
        std::fs::copy(clean.join("inboxes").join(f), dir.join("inboxes").join(f)).unwrap();
    }
    clean
}

/// A Claude Code user's review: the runtime deletes the team folder when
/// the session ends, and the watch's summary then said "2 entries not
/// judged": no config.json (the roster unknown) and no inboxes/ folder,
/// though both had been read. A folder gone loses nothing, and is no
/// problem of the files.
#[test]
fn a_folder_deleted_when_the_session_ends_leaves_the_summary_as_it_was() {
    let root = std::env::temp_dir().join(format!("handshake-watch-deleted-{}", std::process::id()));
    let team = root.join("team");
    clean_team_at(&team);
    let mut watch = Watch::start(&team);
    watch.wait_for(|l| l.starts_with("agents:"), Duration::from_secs(10), "the status line");
    std::fs::remove_dir_all(&team).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let (end, code, said) = watch.stop();
    assert_eq!(code, Some(130), "{}", said.join("\n"));
    assert!(end.starts_with("PASS  ") && end.contains("12 entries kept"), "{end}");
    assert!(!end.contains("not judged"), "{end}");
    assert!(!said.iter().any(|l| l.contains("no config.json") || l.contains("no inboxes/")), "{}", said.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: the lead's inbox left half written (not
/// JSON) was said only in the summary; watching live, nothing told the
/// user the lead's inbox had stopped being readable.
#[test]
fn an_inbox_that_stays_unreadable_is_said_as_the_watch_goes() {
    let root = std::env::temp_dir().join(format!("handshake-watch-unreadable-{}", std::process::id()));
    let clean = clean_team_at(&root);
    let mut watch = Watch::start(&root);
    watch.wait_for(|l| l.starts_with("agents:"), Duration::from_secs(10), "the status line");
    let lead = std::fs::read(clean.join("inboxes/team-lead.json")).unwrap();
    std::fs::write(root.join("inboxes/team-lead.json"), &lead[..300]).unwrap();
    // Judged without it once it has stayed so (two seconds), and said then.
    let said =
        watch.wait_for(|l| l.starts_with("? inboxes/team-lead.json: not JSON"), SAY_WITHIN * 2, "the unreadable inbox");
    assert!(said.contains("EOF while parsing"), "{said}");
    let (end, _, lines) = watch.stop();
    assert!(end.contains("1 entry not judged"), "{end}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("? inboxes/team-lead.json")).count(), 1, "said once live");
    let _ = std::fs::remove_dir_all(&root);
}

/// A Claude Code user's review: `--interval 0ms` was refused as a span
/// that "would stop every run before it starts", words for --cap.
#[test]
fn a_zero_interval_or_span_is_refused_in_a_watchs_words() {
    for flag in ["--interval", "--for"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["watch", FIXTURES, flag, "0ms"])
            .output()
            .expect("watch runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("\"0ms\" is no time") && !err.contains("every run"), "{flag}: {err}");
    }
}

/// Heard as Ctrl-C, SIGHUP must still be ignorable: `nohup handshake
/// watch …` (or a sweep) outlives the terminal it was started from.
#[cfg(unix)]
#[test]
fn a_watch_started_with_sighup_ignored_outlives_its_terminal() {
    use std::os::unix::process::CommandExt;
    let mut watch = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"));
    watch
        .args(["watch", &format!("{FIXTURES}/clean-team"), "--interval", "100ms", "--for", "60s", "--color", "never"])
        .stdout(std::process::Stdio::piped());
    // SAFETY: only sets a signal's disposition in the child before exec, as nohup does.
    unsafe {
        watch.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = watch.spawn().expect("watch starts");
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    // SAFETY: signals to a child process this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) };
    std::thread::sleep(Duration::from_millis(700));
    assert!(child.try_wait().unwrap().is_none(), "a SIGHUP it was started ignoring ended it");
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
}
