//! `handshake watch`: follow a live Claude Code team folder, a lead's
//! transcript or a reference inbox folder as it changes, keep every entry
//! ever seen (rewrites, flipped flags, drained inboxes and a deleted folder
//! lose nothing), and judge as entries arrive with the oracle `audit` uses.
//! A change is seen through `notify` (inotify where there is one); at each
//! `--interval` the files' sizes and times are looked at too, and the files
//! are read again only when those changed: a team at rest costs nothing.

use super::{EXIT_BAD_INPUT, EXIT_BOUND, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::history::follow::{Followed, Status};
use crate::oracle::{check_log, Log};
use crate::protocol::Millis;
use clap::Args;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// A Claude Code team folder (~/.claude/teams/<team>), a lead's transcript (~/.claude/projects/<project>/<session>.jsonl) or a reference inbox folder (docs/claude-code.md)
    pub path: PathBuf,
    /// Also write what was kept, in the history format (docs/history.md), when the watch ends: audit and --to-scenario read it later
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// How often to look again when no change is signalled, e.g. "500ms"
    #[arg(long, value_parser = super::args::parse_watch_span, default_value = "1s")]
    pub interval: Millis,
    /// Stop on its own after this long, e.g. "10m" (default: until Ctrl-C)
    #[arg(long = "for", value_name = "SPAN", value_parser = super::args::parse_watch_span)]
    pub for_: Option<Millis>,
    /// Stop, judged, once more than N entries are kept (every entry ever seen is kept, so this bounds the memory a long watch of a busy team takes); exit 3
    #[arg(long, value_name = "N", default_value_t = MOST_KEPT, value_parser = clap::value_parser!(usize))]
    pub max_entries: usize,
}

pub const WATCH_EXAMPLES: &[(&str, &str)] = &[
    ("handshake watch ~/.claude/teams/my-team", "judge a live team as it works; Ctrl-C for the summary"),
    ("handshake watch ~/.claude/teams/my-team --trace team.jsonl", "and keep its history, to audit later"),
    ("handshake watch ~/.claude/projects/my-project/SESSION.jsonl", "follow the lead's transcript as the session goes"),
];

pub fn main(a: WatchArgs) -> i32 {
    let shown = a.path.display().to_string();
    let mut followed = match Followed::of(&a.path) {
        Ok(f) => f,
        Err(why) => {
            eprintln!("error: {shown}: {why}; nothing was watched");
            return EXIT_BAD_INPUT;
        }
    };
    // A trace that would overwrite what is watched (a team's inbox) is
    // refused first: trying the write makes a file beside it, and nothing
    // is ever written into what is watched. Then one that cannot be
    // written is said now, not after hours of watching.
    if let Some(trace) = &a.trace {
        if let Some((_, why)) = super::clashing_output(&[("--trace", trace)], &[("what is watched", &a.path)]) {
            eprintln!("error: {why}; nothing was watched");
            return EXIT_BAD_INPUT;
        }
    }
    if let Some(Err(why)) = a.trace.as_deref().map(crate::output::check) {
        eprintln!("error: {why}; nothing was watched");
        return EXIT_BAD_INPUT;
    }
    crate::interrupt::install();
    // A reader that goes away (`watch … | head`) ends the watch as Ctrl-C
    // does, with its --trace written, rather than the process at once.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition; the writes then fail with
    // EPIPE, which `Screen` hears.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    // Kept alive for the watch; without it (no inotify), the look at each interval alone.
    let _watcher = start_watcher(&a.path, tx);
    let started = Instant::now();
    let mut screen = Screen::new();
    let mut told: BTreeSet<String> = BTreeSet::new();
    let mut last_new = Instant::now();
    // Something new not judged yet, and since when an inbox has not parsed.
    let mut to_judge = false;
    let mut unsettled_since: Option<Instant> = None;
    let mut print = None;
    let mut signalled = true;
    let mut next_look = Instant::now();
    let mut bounded = false;
    screen.say(&format!("watching {shown}, {} (Ctrl-C for the summary)", followed.kind()));
    loop {
        // Read again when told of a change, or when the files' sizes and
        // times say one was missed; otherwise nothing is read.
        if signalled || Instant::now() >= next_look {
            let now = Some(followed.fingerprint(&a.path));
            if (signalled || now != print) && followed.look(&a.path) {
                last_new = Instant::now();
                to_judge = true;
            }
            if followed.len() > a.max_entries {
                bounded = true;
                break;
            }
            print = now;
            signalled = false;
            next_look = Instant::now() + a.interval.as_std();
        }
        // An inbox that does not parse is most likely being written: what
        // was kept is judged once it parses, or once it has stayed so.
        unsettled_since = followed.unsettled().then(|| unsettled_since.unwrap_or_else(Instant::now));
        // A transcript read a part at a time is judged once it is all read.
        let behind = followed.behind();
        if to_judge && !behind && unsettled_since.is_none_or(|since| since.elapsed() >= UNSETTLED_WAIT) {
            judge_new(&followed, &mut told, &mut screen);
            screen.drawn_for = None;
            to_judge = false;
        }
        screen.status(last_new.elapsed());
        if crate::interrupt::requested()
            || screen.check_gone()
            || a.for_.is_some_and(|f| started.elapsed() >= f.as_std())
        {
            break;
        }
        if behind {
            // The rest of what is there, at once.
            signalled = true;
            continue;
        }
        // Ctrl-C is looked at every 200 ms at least.
        let wait = a.interval.as_std().min(Duration::from_millis(200)).max(Duration::from_millis(10));
        if rx.recv_timeout(wait).is_ok() {
            while rx.try_recv().is_ok() {}
            signalled = true;
        }
    }
    screen.clear();
    // The summary's verdict is the exit's: a violation said on the way
    // that what was kept no longer shows (an inbox read half written) is
    // not a failure of the team.
    // The files read up to their bound at the last look: what lies past it
    // was not kept, as audit stops there too.
    let read_bounded = followed.bounded();
    // Stopped (--for, Ctrl-C) while a long transcript was read a part at a time.
    let unread = followed.behind() && !bounded;
    let code = summary(&followed, &shown, &a.trace, bounded || read_bounded || unread, screen.gone);
    if unread {
        eprintln!("stopped before the transcript was read to its end: what lies past it was not judged");
    }
    if read_bounded && !bounded {
        eprintln!(
            "stopped: the last look read the files up to their bound ({} MiB in all): what lies past it was not \
             judged; audit a part of the folder",
            crate::history::inbox::MAX_FOLDER_BYTES >> 20
        );
    }
    if bounded {
        eprintln!(
            "stopped: {} entries kept, past --max-entries {}: the summary judges them; audit the files as they are \
             now, or watch again",
            followed.len(),
            a.max_entries
        );
    }
    match code {
        _ if crate::interrupt::requested() || screen.gone => EXIT_INTERRUPTED,
        EXIT_OK if bounded || read_bounded || unread => EXIT_BOUND,
        code => code,
    }
}

/// The most entries a watch keeps unless told (each entry ever seen is
/// kept, whatever the files do after): past it the watch stops, judged,
/// with exit 3, so memory stays bounded however long a busy team is
/// followed (about 800 bytes an entry: 400 MB).
pub const MOST_KEPT: usize = 500_000;

/// How long an inbox may stay unparseable before what was kept is judged
/// without it.
const UNSETTLED_WAIT: Duration = Duration::from_secs(2);

fn start_watcher(path: &std::path::Path, tx: std::sync::mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut w = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        // Our own reads open and close the files: those are not changes,
        // and waking on them would have the watch read again and again.
        if !matches!(e, Ok(notify::Event { kind: notify::EventKind::Access(_), .. })) {
            let _ = tx.send(());
        }
    })
    .ok()?;
    w.watch(path, notify::RecursiveMode::Recursive).ok()?;
    Some(w)
}

/// Judges all that was kept and prints each violation not printed yet.
fn judge_new(followed: &Followed, told: &mut BTreeSet<String>, screen: &mut Screen) {
    let h = match followed.history() {
        Ok(h) => h,
        Err(bad) => {
            // A reference folder whose lines are not messages yet: said once.
            let line = format!("⚠ what was kept cannot be judged yet: {}", bad.reason);
            if told.insert(line.clone()) {
                screen.say(&line);
            }
            return;
        }
    };
    // Ages as at the last entry; the status line adds the time since.
    screen.base = Some(Status::of(&h, Millis::ZERO));
    // A file that could not be read (judging waited for it to parse): said
    // as it is found, not only in the summary. Entries' problems are the
    // summary's (those in flight come and go with every look).
    for (place, why) in &h.unjudged {
        let file = crate::history::claude::folder::entry_place(place).is_none() && place.starts_with("inboxes/");
        // A transcript replaced under its name: what was kept mixes two files.
        if file || place == crate::history::claude::kept::TRANSCRIPT {
            let line = format!("? {place}: {why}");
            if told.insert(line.clone()) {
                screen.say(&line);
            }
        }
    }
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    for v in &violations {
        let line = format!("✗ invariant {} — {}", v.invariant, super::shown(&v.detail));
        if told.insert(line.clone()) {
            let place = v.event.map(|i| place_of(&h, i)).unwrap_or_default();
            screen.say(&format!("{line}  {place}"));
        }
    }
    for e in &h.events {
        if let crate::trace::Event::Alert { text, .. } = &e.event {
            // How long a request has been open changes at every look: the
            // status line shows it, and the summary says it once.
            // So does the count of repeats past those said one by one.
            if changes_at_every_look(text) {
                continue;
            }
            let line = format!("⚠ {text}");
            if told.insert(told_as(&line)) {
                screen.say(&line);
            }
        }
    }
}

/// An alert whose words change as entries come (how long a request has
/// been open, how many repeats past those said one by one): the summary
/// says it once, not each look.
fn changes_at_every_look(text: &str) -> bool {
    text.contains("was never answered")
        || text.contains("was not seen answered")
        || (text.starts_with("and ") && text.contains(" more repeated "))
}

/// What an alert is remembered by, so that it is said once: its words,
/// but for an inbox's size, which grows with every entry (said once, when
/// the inbox first passes the size the alert is about).
fn told_as(line: &str) -> String {
    match line.split_once(" holds ") {
        Some((inbox, rest)) if inbox.starts_with("⚠ inboxes/") && rest.contains(" entries: past ") => {
            format!("{inbox} holds too many entries")
        }
        _ => line.to_string(),
    }
}

/// Event `i`'s place: `inboxes/bob.json:2`, or a transcript's `line 12`.
fn place_of(h: &crate::history::History, i: usize) -> String {
    match (h.origin.get(i), h.lines.get(i)) {
        (Some(file), Some(n)) if !file.is_empty() => format!("{file}:{n}"),
        (_, Some(n)) => format!("line {n}"),
        _ => String::new(),
    }
}

/// Where the watch writes: each finding on a line of its own, and the
/// status line, redrawn in place on a terminal, or printed again when it
/// changes (not when only ages grow) where the output is a file or pipe.
struct Screen {
    tty: bool,
    /// The status line now on the terminal, if any.
    drawn: Option<String>,
    /// The status last printed (ages left out), off a terminal.
    printed: Option<Status>,
    /// The status as at the last new entry, from the last judgement.
    base: Option<Status>,
    /// The whole seconds since the last entry the drawn line shows.
    drawn_for: Option<u64>,
    /// The output went away (a pipe's reader ended, a terminal closed):
    /// the watch ends, and writes nothing more to it.
    gone: bool,
}

impl Screen {
    fn new() -> Screen {
        use std::io::IsTerminal;
        let tty = std::io::stdout().is_terminal();
        Screen { tty, drawn: None, printed: None, base: None, drawn_for: None, gone: false }
    }

    /// Writes `text` and flushes it; a write that fails marks the output gone.
    fn write(&mut self, text: &str) {
        use std::io::Write;
        if self.gone {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
            self.gone = true;
        }
    }

    /// Whether the output went away while the watch had nothing to say
    /// (a pipe whose reader ended, a terminal hung up): off a terminal the
    /// watch writes only when something changes, so a write would tell too
    /// late, if ever.
    fn check_gone(&mut self) -> bool {
        #[cfg(unix)]
        if !self.gone {
            let mut out = libc::pollfd { fd: 1, events: 0, revents: 0 };
            // SAFETY: polls one descriptor this process holds, without waiting.
            let ready = unsafe { libc::poll(&mut out, 1, 0) };
            self.gone = ready > 0 && out.revents & (libc::POLLERR | libc::POLLHUP) != 0;
        }
        self.gone
    }

    /// Prints a finding above the status line.
    fn say(&mut self, line: &str) {
        self.clear();
        // Names and words come from the files: never a terminal's controls.
        self.write(&format!("{}\n", super::shown(line)));
    }

    /// Takes the status line off the terminal.
    fn clear(&mut self) {
        if self.drawn.take().is_some() {
            self.write("\r\x1b[K");
        }
    }

    /// Shows the status `since` after the last new entry: on a terminal,
    /// redrawn when a second has passed; elsewhere, printed when an agent or
    /// an open request comes or goes.
    fn status(&mut self, since: Duration) {
        let Some(base) = &self.base else { return };
        let secs = since.as_secs();
        if self.tty {
            if self.drawn.is_some() && self.drawn_for == Some(secs) {
                return;
            }
            let aged = Millis(since.as_millis().min(u64::MAX as u128) as u64);
            let open = base.open.iter().map(|(l, age)| (l.clone(), Millis(age.0.saturating_add(aged.0)))).collect();
            let line = Status { agents: base.agents.clone(), open }.line();
            self.write(&format!("\r\x1b[K{}", super::shown(&line)));
            self.drawn = Some(line);
            self.drawn_for = Some(secs);
        } else {
            let ageless = Status {
                agents: base.agents.clone(),
                open: base.open.iter().map(|(l, _)| (l.clone(), Millis::ZERO)).collect(),
            };
            if self.printed.as_ref() != Some(&ageless) {
                let line = format!("{}\n", super::shown(&base.line()));
                self.write(&line);
                self.printed = Some(ageless);
            }
        }
    }
}

/// The violations a summary lists by name; the rest are counted.
const LISTED: usize = 50;

/// The summary when the watch ends: the verdict on all that was kept, and
/// the history written if asked; the exit code they make. With the output
/// `gone` (its reader ended, its terminal closed), nothing is printed but
/// errors, and the history is still written.
fn summary(followed: &Followed, shown: &str, trace: &Option<PathBuf>, bounded: bool, gone: bool) -> i32 {
    // No verdict, neither a pass nor a failure of the team: why, what
    // could not be judged, and that no trace was written.
    let nothing = |why: &str, unjudged: &[(String, String)]| {
        if !gone {
            let none = crate::color::paint("NONE", crate::color::Paint::Warn, crate::color::stdout());
            println!(
                "{none}  {shown}  ({} kept; not judged: {why})",
                crate::words::plural(followed.len() as u64, "entry")
            );
            super::print_unjudged(unjudged, "");
            if trace.is_some() {
                println!("      no trace written: nothing kept could be judged");
            }
        }
        EXIT_BAD_INPUT
    };
    let h = match followed.history() {
        Ok(h) => h,
        Err(bad) => return nothing(&bad.reason, &[]),
    };
    // Nothing kept to judge (no message, no task) is no pass, as audit
    // refuses such a folder.
    if h.events.is_empty() && followed.tasks() == 0 {
        return nothing("no message was kept to judge, and that is not a pass", &h.unjudged);
    }
    // The history first: it is what a session leaves (the runtime deletes
    // the team folder), and printing may fail on a closed terminal.
    let written = trace.as_deref().map(|path| write_trace(path, shown, &h, followed.not_read()));
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    if !gone {
        print_verdict(followed, shown, &h, &violations, bounded);
    }
    match written {
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
        Some(Ok(())) if !gone => {
            let path = trace.as_deref().unwrap_or(std::path::Path::new(""));
            println!(
                "      wrote {}: {} audit {}",
                path.display(),
                super::args::program(),
                crate::words::path_word(&path.display().to_string())
            );
        }
        _ => {}
    }
    if violations.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// Writes what was kept to `path`, in the history format, whole or not at
/// all, with the files the last look could not read (`not_read`, a
/// reference folder's: `alice.jsonl: not read: …`) among what it could not
/// judge: audited later, the trace must not read as a clean bill.
fn write_trace(
    path: &std::path::Path,
    shown: &str,
    h: &crate::history::History,
    not_read: &[String],
) -> Result<(), String> {
    let scenario = format!("watch of {shown}");
    let mut header =
        crate::history::header_of(&scenario, 0, &h.names.agents, (h.ended_at, h.stop), &h.policy, &h.require_plan)
            .with_context_of(h);
    for why in not_read {
        let (place, why) = why.split_once(": ").unwrap_or(("", why));
        header.unjudged.push(crate::history::Unjudged { place: place.into(), why: why.into() });
    }
    let mut bytes = Vec::new();
    let _ = crate::history::write_events(&mut bytes, &header, &h.events, &h.names);
    let text = String::from_utf8_lossy(&bytes);
    crate::output::write(path, &text).map_err(|e| e.to_string())
}

/// The summary's verdict and what it judges by: each entry not judged and
/// each violation (the watch printed them as they came, but a summary read
/// alone must not say "1 broken" and name nothing).
fn print_verdict(
    followed: &Followed,
    shown: &str,
    h: &crate::history::History,
    violations: &[crate::oracle::Violation],
    bounded: bool,
) {
    // Stopped at --max-entries, or the last look read up to the files'
    // bound: exit 3.
    let word = crate::color::verdict_or_stopped(violations.is_empty(), bounded);
    let unjudged = match h.unjudged.len() {
        0 => String::new(),
        n => format!("; {} not judged", crate::words::plural(n as u64, "entry")),
    };
    // What the files cannot show is unknown, not held, as audit says it.
    let unknown = crate::history::standing::unknown(&crate::history::standing::standings(&h.undecided, violations));
    let unknown = match unknown {
        0 => String::new(),
        n => format!("; {} unknown", crate::words::plural(n as u64, "invariant")),
    };
    let not_read = match followed.not_read().len() {
        0 => String::new(),
        n => format!("; {} not read", crate::words::plural(n as u64, "file")),
    };
    println!(
        "{word}  {shown}  ({} kept, {} broken{unknown}{unjudged}{not_read})",
        crate::words::plural(followed.len() as u64, "entry"),
        crate::words::plural(violations.len() as u64, "invariant")
    );
    for e in &h.events {
        if let crate::trace::Event::Alert { text, .. } = &e.event {
            if changes_at_every_look(text) {
                println!("      ⚠ {}", super::shown(text));
            }
        }
    }
    for why in followed.not_read() {
        println!("      ⚠ {}", super::shown(why));
    }
    super::print_unjudged(&h.unjudged, "");
    for v in violations.iter().take(LISTED) {
        let cross = crate::color::paint("✗", crate::color::Paint::Fail, crate::color::stdout());
        let place = v.event.and_then(|i| Some(format!(" [{}]", h.place(i)?))).unwrap_or_default();
        println!(
            "      {cross} invariant {} — {} (at {}){}",
            v.invariant,
            super::shown(&v.detail),
            v.at,
            super::shown(&place)
        );
    }
    if violations.len() > LISTED {
        println!("      ✗ … and {} more (audit the --trace for every one)", violations.len() - LISTED);
    }
    for name in followed.unfinished(std::path::Path::new(shown)) {
        println!("      ⚠ {}: its last line has no newline (still being written?): not kept", super::shown(&name));
    }
}
