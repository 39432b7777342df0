//! `handshake audit`: judge a history (a run's `--trace`, or lines another
//! program wrote in the same format) with the same oracle `run` uses.

use super::bad_input::{Problem, Refusal};
use super::{Format, EXIT_FAILED, EXIT_OK};
use crate::history::standing::Standing;
use crate::oracle::{check_log, Log};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// A history (JSON Lines as `run --trace` writes them: docs/history.md), or a team's inbox folder: *.jsonl in it or in its .team/inbox, inbox or .mailboxes (docs/audit.md), or a Claude Code team folder, ~/.claude/teams/<team>, its tasks folder, ~/.claude/tasks/<team>, or its lead's transcript, ~/.claude/projects/<project>/<session>.jsonl (docs/claude-code.md)
    pub path: PathBuf,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the history as a scenario file F that replays its lines (each request and answer a step at its time, delivery times as delays), to run, explore or shrink the incident
    #[arg(long, value_name = "F")]
    pub to_scenario: Option<PathBuf>,
    /// Exit 2 if any entry could not be interpreted (an unknown message type, a time it cannot read) and nothing was found broken (a violation's exit 1 comes first): without it, such entries are counted on the verdict line, and the history is judged without them
    #[arg(long)]
    pub strict: bool,
}

pub const AUDIT_EXAMPLES: &[(&str, &str)] = &[
    ("handshake run scenarios/14-sender-auth-off.toml --trace run.jsonl", "keep a run's history"),
    ("handshake audit run.jsonl", "judge it again, from the file alone"),
    ("handshake audit run.jsonl --format json", "every violation with the line that shows it"),
    ("handshake audit path/to/project", "a real team's inbox files (.team/inbox, .mailboxes)"),
    ("handshake audit ~/.claude/teams/my-team", "a Claude Code team's inboxes (docs/claude-code.md)"),
    ("handshake audit ~/.claude/tasks/my-team", "its tasks alone: what waits on what, and who owns what"),
    (
        "handshake audit path/to/project --to-scenario incident.toml",
        "the incident as a scenario to run, explore or shrink",
    ),
];

/// The longest history read: a million events is far past any bundled run.
const MAX_BYTES: u64 = 512 << 20;

/// Where a history came from: what it can show, and how to name its places.
enum Source {
    /// A history in the documented format (`run --trace`, `watch --trace`).
    Trace,
    /// The reference course's inbox files, in this folder.
    Inboxes(PathBuf),
    /// A Claude Code team folder, as read (a violation's witness is found
    /// among its entries), and its tasks folder when one was found.
    Team(PathBuf, crate::history::claude::folder::Reading, Option<TasksRead>),
    /// A Claude Code lead's session transcript, as read.
    Transcript(crate::history::claude::folder::Reading),
    /// A Claude Code tasks folder alone.
    Tasks(TasksRead),
}

/// A tasks folder that was read: where, and how many tasks it held.
struct TasksRead {
    dir: PathBuf,
    tasks: usize,
    /// The tasks folder's read stopped at its bound.
    bounded: bool,
    /// Every file was looked at (not so past the number of files read).
    whole: bool,
    /// Fields of the tasks this reader does not use, with how often.
    unused_fields: std::collections::BTreeMap<String, usize>,
}

impl Source {
    /// Whether the read stopped at a bound, leaving entries or files unread.
    fn bounded(&self) -> bool {
        self.bound().is_some()
    }

    /// The bound the read stopped at, if it stopped at one: the inbox
    /// files' bytes, the tasks folder's bytes or its number of files.
    fn bound(&self) -> Option<String> {
        let mib = crate::history::inbox::MAX_FOLDER_BYTES >> 20;
        let tasks = |t: &TasksRead| match t.whole {
            true => format!("the tasks folder's bound ({mib} MiB read at most)"),
            false => format!(
                "the tasks folder's bound ({} files read at most)",
                crate::words::grouped(crate::history::claude::tasks::MOST_FILES as u64)
            ),
        };
        match self {
            Source::Team(_, r, _) if r.bounded => Some(format!("the inbox files' bound ({mib} MiB read at most)")),
            Source::Team(_, _, Some(t)) | Source::Tasks(t) if t.bounded => Some(tasks(t)),
            _ => None,
        }
    }

    fn reading(&self) -> Option<&crate::history::claude::folder::Reading> {
        match self {
            Source::Team(_, r, _) | Source::Transcript(r) => Some(r),
            _ => None,
        }
    }
}

/// The most violations a witness is looked for: each costs a few judgings
/// of a handful of entries, and a report past this many is read by a program.
const WITNESSES: usize = 100;

/// The most broken invariants the text report shows one by one: the rest
/// are counted (a folder can hold hundreds of thousands).
const LISTED: usize = 20;

/// The same for alerts: most checks bound their own (twenty, then a count
/// of the rest), and this bounds what they add up to.
const ALERTS_LISTED: usize = 200;

pub fn main(a: AuditArgs) -> i32 {
    if let Some(f) = &a.to_scenario {
        if let Some((flag, why)) = super::clashing_output(&[("--to-scenario", f)], &[("what is audited", &a.path)]) {
            let line = format!("{why}; nothing was judged");
            return Refusal::line(line, Problem::in_flag(flag, why).at(f.display())).tell(a.format);
        }
        // Tried before the audit, as every command's outputs are.
        if let Err(why) = crate::output::check(f) {
            let line = format!("--to-scenario: {why}; nothing was judged");
            return Refusal::line(line, Problem::in_flag("--to-scenario", why).at(f.display())).tell(a.format);
        }
    }
    let (h, source) = match read(&a) {
        Ok(read) => read,
        Err(refused) => return refused.tell(a.format),
    };
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    let standings = crate::history::standing::standings(&h.undecided, &violations);
    let places: Vec<Option<String>> = violations.iter().map(|v| h.place(v.event?)).collect();
    let finder = source.reading().filter(|_| !violations.is_empty()).map(|r| {
        let whole =
            violations.iter().zip(&places).filter_map(|(v, p)| Some((v.invariant, p.as_deref()?, v.detail.as_str())));
        crate::history::claude::witness::Witnesses::new(r, whole)
    });
    let witnesses: Vec<Option<Vec<String>>> = violations
        .iter()
        .enumerate()
        .map(|(n, v)| {
            let finder = finder.as_ref().filter(|_| n < WITNESSES)?;
            finder.of(places[n].as_deref()?, v)
        })
        .collect();
    let shown = a.path.display().to_string();
    // Written first: a scenario that cannot be written is bad input, and
    // then nothing is reported as judged either.
    let wrote = match &a.to_scenario {
        Some(f) if matches!(source, Source::Tasks(_)) => {
            // Tasks hold no message: a scenario of them would have no step.
            let why = "a tasks folder holds no messages, so there is nothing to replay: give its team folder \
                       (~/.claude/teams/<team>) to --to-scenario";
            let problem = Problem::in_flag("--to-scenario", why).at(f.display());
            return Refusal::line(format!("{why}; nothing was written"), problem).tell(a.format);
        }
        Some(f) => match write_scenario(&h, &shown, &violations, f) {
            Ok(steps) => Some(format!(
                "wrote {} ({steps}): {} run {} -v",
                f.display(),
                super::args::program(),
                crate::words::path_word(&f.display().to_string())
            )),
            Err(e) => {
                let problem = Problem::in_flag("--to-scenario", e.clone()).at(f.display());
                return Refusal::line(format!("{e}; nothing was written"), problem).tell(a.format);
            }
        },
        None => None,
    };
    let judged =
        Judged { h: &h, source: &source, violations: &violations, standings: &standings, witnesses: &witnesses };
    match a.format {
        Format::Text => report(&judged, &shown),
        Format::Json => json(&judged, &shown),
    }
    if let Some(w) = wrote {
        // Beside the report, not in it: JSON on stdout stays one document.
        match a.format {
            Format::Text => println!("      {w}"),
            Format::Json => eprintln!("{w}"),
        }
    }
    if a.strict && !h.unjudged.is_empty() {
        eprintln!("--strict: {} could not be judged", crate::words::plural(h.unjudged.len() as u64, "entry"));
    }
    if !violations.is_empty() {
        EXIT_FAILED
    } else if let Some(bound) = source.bound() {
        // Exit 3, as every command that stops at a bound: what lies past it
        // was not judged, so "nothing broke" would claim too much.
        let line = format!("stopped at {bound}: what lies past it was not judged (exit 3)");
        match a.format {
            Format::Text => println!("      {line}"),
            Format::Json => eprintln!("{line}"),
        }
        super::EXIT_BOUND
    } else if a.strict && !h.unjudged.is_empty() {
        super::EXIT_BAD_INPUT
    } else {
        EXIT_OK
    }
}

/// Reads what `a.path` holds, the format told from the files: a Claude
/// Code team folder, a reference inbox folder, a Claude Code transcript, or
/// a history.
fn read(a: &AuditArgs) -> Result<(crate::history::History, Source), Refusal> {
    let shown = a.path.display().to_string();
    use crate::history::claude::{self, tasks};
    if a.path.is_dir() && claude::folder::is_team_folder(&a.path) {
        let reading = claude::folder::read(&a.path, crate::history::inbox::MAX_FOLDER_BYTES);
        let mut h = claude::history_of(&reading);
        // The team's tasks, inside its folder or beside it (docs/claude-code.md, "Tasks").
        let found = tasks::find(&a.path, reading.team.name.as_deref()).map(|dir| {
            let t = tasks::read(&dir, crate::history::inbox::MAX_FOLDER_BYTES);
            claude::with_tasks(&mut h, &t, &reading);
            TasksRead { dir, tasks: t.tasks.len(), bounded: t.bounded, whole: t.whole, unused_fields: t.unused_fields }
        });
        // Judged: a message sent. Notes on what could not be read, and the
        // runtime's notices alone, are not (a review: a folder whose one
        // request had a renamed type passed, 0 messages, exit 0).
        let a_message = h.events.iter().any(|e| matches!(e.event, crate::trace::Event::Send { .. }));
        if !a_message && found.as_ref().is_none_or(|t| t.tasks == 0) {
            let what = if reading.entries.is_empty() {
                "no message in any inbox file and no task"
            } else {
                "no message that could be judged and no task"
            };
            return Err(nothing_to_judge(&shown, what, &h.unjudged));
        }
        return Ok((h, Source::Team(a.path.clone(), reading, found)));
    }
    if a.path.is_dir() && tasks::is_tasks_folder(&a.path) {
        let t = tasks::read(&a.path, crate::history::inbox::MAX_FOLDER_BYTES);
        let h = claude::tasks_history(&t);
        // A folder of tasks none of which could be read judges nothing, as
        // a team folder with no readable message does not.
        if t.tasks.is_empty() && !t.bounded {
            return Err(nothing_to_judge(&shown, "no task that could be read", &h.unjudged));
        }
        let read = TasksRead {
            dir: a.path.clone(),
            tasks: t.tasks.len(),
            bounded: t.bounded,
            whole: t.whole,
            unused_fields: t.unused_fields,
        };
        return Ok((h, Source::Tasks(read)));
    }
    if a.path.is_dir() {
        let Some(dir) = crate::history::inbox::find(&a.path) else {
            let why = "no inbox files here: looked for a Claude Code team folder (inboxes/*.json, or config.json with \
                       members), a Claude Code tasks folder (<n>.json, one task a file) and the reference course's \
                       *.jsonl (in it, or in its .team/inbox, inbox or .mailboxes)";
            // The `inboxes/` of a team folder, named instead of the folder.
            let parent = a.path.parent().filter(|_| a.path.file_name().is_some_and(|n| n == "inboxes"));
            let why = match parent.filter(|p| claude::folder::is_team_folder(p)) {
                Some(team) => format!(
                    "this is a Claude Code team folder's inboxes/: audit the team folder, {}, which holds them and \
                     its config",
                    super::shown(&team.display().to_string())
                ),
                None => match teams_in(&a.path) {
                    Some(teams) => teams,
                    None => why.to_string(),
                },
            };
            let line = format!("{shown}: {why}; nothing was judged");
            return Err(Refusal::line(line, Problem::in_file(&shown, why)));
        };
        if let Some(refusal) = transcripts_in(&dir, &shown) {
            return Err(refusal);
        }
        return match crate::history::inbox::read(&dir) {
            Ok(h) => Ok((h, Source::Inboxes(dir))),
            Err(bad) => {
                // The reason starts with the file of the folder it is about
                // (line 0: the file as a whole), or is about the folder.
                let (file, why) = match bad.reason.split_once(": ") {
                    Some((file, why)) if bad.line > 0 || file.ends_with(".jsonl") => (dir.join(file), why),
                    _ => (dir.clone(), bad.reason.as_str()),
                };
                let mut problem = Problem::in_file(file.display(), why);
                let line = if bad.line > 0 {
                    problem = problem.on_line(bad.line);
                    format!("{}:{}: {why}; nothing was judged", file.display(), bad.line)
                } else {
                    format!("{}: {why}; nothing was judged", file.display())
                };
                Err(Refusal::line(line, problem))
            }
        };
    }
    // A transcript on disk is read a line at a time, whatever its size: held
    // whole it took several times its size in memory.
    let first = crate::history::follow::first_lines(&a.path);
    if first.is_ok_and(|f| crate::history::claude::transcript::looks_like(&f)) {
        let read = std::fs::File::open(&a.path)
            .and_then(|file| crate::history::claude::transcript::read_from(file, "team-lead"))
            .map_err(|e| Refusal::line(format!("{shown}: {e}"), Problem::in_file(&shown, e.to_string())))?;
        return transcript(&shown, read);
    }
    let text = crate::input::read_text(&a.path, MAX_BYTES)
        .map_err(|e| Refusal::line(format!("{shown}: {e}"), Problem::in_file(&shown, e.to_string())))?;
    if crate::history::claude::transcript::looks_like(&text) {
        // A Claude Code lead's session transcript (docs/claude-code.md).
        return transcript(&shown, crate::history::claude::transcript::read(&text, "team-lead"));
    }
    crate::history::read(&text).map(|h| (h, Source::Trace)).map_err(|bad| {
        let line = format!("{shown}:{}: {}; nothing was judged", bad.line, bad.reason);
        Refusal::line(line, Problem::in_file(&shown, bad.reason).on_line(bad.line))
    })
}

/// The Claude Code team folders in `dir` or in its `teams/` (`~/.claude/teams`,
/// `~/.claude`), said as what to audit instead, if there are any: a team's
/// folder is named for its session (`session-<hex>`), which a user does not
/// guess. At most the first ten by name are listed; the rest are counted.
fn teams_in(dir: &std::path::Path) -> Option<String> {
    const LISTED: usize = 10;
    for place in [dir.to_path_buf(), dir.join("teams")] {
        let Ok(entries) = std::fs::read_dir(&place) else { continue };
        let (mut names, mut more) = (Vec::new(), 0usize);
        for e in entries.flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) && crate::history::claude::folder::is_team_folder(&path) {
                names.push(e.file_name().to_string_lossy().into_owned());
                names.sort();
                if names.len() > LISTED {
                    names.pop();
                    more += 1;
                }
            }
        }
        if names.is_empty() {
            continue;
        }
        let more = if more > 0 { format!(", and {more} more") } else { String::new() };
        let shown: Vec<String> = names.iter().map(|n| super::shown(n).into_owned()).collect();
        return Some(format!(
            "this folder holds Claude Code team folders, not a team's files: audit one of them ({}{more}, in {})",
            shown.join(", "),
            super::shown(&place.display().to_string())
        ));
    }
    None
}

/// A folder whose `*.jsonl` files are Claude Code session transcripts
/// (`~/.claude/projects/<project>/`), not inbox files: refused, naming them,
/// since which one is the lead's session the folder cannot say. Read as
/// inboxes, the first line of the first was refused for a missing "from".
fn transcripts_in(dir: &std::path::Path, shown: &str) -> Option<Refusal> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let transcript = |p: &PathBuf| {
        crate::history::follow::first_lines(p).is_ok_and(|f| crate::history::claude::transcript::looks_like(&f))
    };
    let (transcripts, others): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(transcript);
    let first = transcripts.first()?;
    let name = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let listed = |files: &[PathBuf]| {
        let named: Vec<String> = files.iter().take(3).map(name).collect();
        let more = if files.len() > 3 { format!(" and {} more", files.len() - 3) } else { String::new() };
        format!("{}{more}", super::shown(&named.join(", ")))
    };
    // A folder that mixes the two is neither: which files are the team's
    // inboxes, and which session is the lead's, it cannot say.
    let mixed = match others.is_empty() {
        true => ", not inbox files".to_string(),
        false => {
            format!(" beside other *.jsonl files ({}): a folder of inbox files holds nothing else", listed(&others))
        }
    };
    let why = format!(
        "this folder holds Claude Code session transcripts ({}){mixed}; audit the lead's transcript on its own, \
         like {} audit {}",
        listed(&transcripts),
        super::args::program(),
        crate::words::path_word(&first.display().to_string())
    );
    Some(Refusal::line(format!("{shown}: {why}; nothing was judged"), Problem::in_file(shown, why)))
}

/// A lead's transcript as read, as a history, unless it holds no team
/// message to judge.
fn transcript(
    shown: &str,
    reading: crate::history::claude::folder::Reading,
) -> Result<(crate::history::History, Source), Refusal> {
    let h = crate::history::claude::transcript_of(&reading);
    if h.events.is_empty() {
        return Err(nothing_to_judge(shown, "no team message in the transcript", &h.unjudged));
    }
    Ok((h, Source::Transcript(reading)))
}

/// A Claude Code folder or transcript in which nothing could be judged: no
/// pass (an empty reference inbox folder is refused the same way), with
/// the first reasons it could not read what it holds.
fn nothing_to_judge(shown: &str, what: &str, unjudged: &[(String, String)]) -> Refusal {
    let mut why = format!("{what}: there is nothing to judge, and that is not a pass");
    if !unjudged.is_empty() {
        let first: Vec<String> = unjudged.iter().take(3).map(|(place, w)| format!("{place}: {w}")).collect();
        let more = match unjudged.len() {
            n if n > 3 => format!(", and {} more", n - 3),
            _ => String::new(),
        };
        why = format!("{why} (what could not be read: {}{more})", first.join("; "));
    }
    let line = format!("{}: {}; nothing was judged", super::shown(shown), super::shown(&why));
    Refusal::line(line, Problem::in_file(shown, why))
}

/// A history and all that was found in it.
struct Judged<'a> {
    h: &'a crate::history::History,
    source: &'a Source,
    violations: &'a [crate::oracle::Violation],
    standings: &'a [(crate::oracle::Invariant, Standing)],
    witnesses: &'a [Option<Vec<String>>],
}

/// The report for people.
fn report(j: &Judged, shown: &str) {
    let h = j.h;
    // Exit 3 when bounded, said again below the report.
    let word = crate::color::verdict_or_stopped(j.violations.is_empty(), j.source.bounded());
    let mut counts = Vec::new();
    let unknown = crate::history::standing::unknown(j.standings);
    if unknown > 0 {
        counts.push(format!("{} unknown", crate::words::plural(unknown as u64, "invariant")));
    }
    if !h.unjudged.is_empty() {
        counts.push(format!("{} not judged", crate::words::plural(h.unjudged.len() as u64, "entry")));
    }
    let counts: String = counts.iter().map(|c| format!("; {c}")).collect();
    match j.source {
        Source::Inboxes(dir) | Source::Team(dir, ..) => {
            let messages = h.events.iter().filter(|e| matches!(e.event, crate::trace::Event::Deliver { .. })).count();
            println!(
                "{word}  {}  ({} among {}{counts})",
                dir.display(),
                crate::words::plural(messages as u64, "message"),
                crate::words::plural(h.names.agents.len() as u64, "agent")
            );
        }
        Source::Tasks(t) => {
            println!("{word}  {}  ({}{counts})", t.dir.display(), crate::words::plural(t.tasks as u64, "task"))
        }
        _ => {
            let of = match (&h.scenario, h.seed) {
                (Some(s), Some(seed)) => format!(", a run of {s} with seed {seed}"),
                (Some(s), None) => format!(", a run of {s}"),
                _ => String::new(),
            };
            println!("{word}  {shown}  ({}{of}{counts})", crate::words::plural(h.events.len() as u64, "event"));
        }
    }
    match j.source {
        Source::Team(..) => println!(
            "      read as a Claude Code 2.1 team folder (docs/claude-code.md): an answer applied by its id alone, as \
             its runtime applies one"
        ),
        Source::Inboxes(_) => println!(
            "      read as received messages; a file a read drained holds only its unread tail (docs/history.md)"
        ),
        Source::Transcript(_) => println!(
            "      read as a Claude Code lead's session transcript (docs/claude-code.md): its sends, and what reached it"
        ),
        Source::Tasks(_) => println!(
            "      read as a Claude Code 2.1 tasks folder (docs/claude-code.md#tasks): what waits on what, and who owns \
             what; no messages"
        ),
        Source::Trace => {}
    }
    if let Some(r) = j.source.reading() {
        println!("      generation: {}", crate::history::claude::generation(r));
    }
    let unused = fields_not_read(j.source);
    if !unused.is_empty() {
        let listed: Vec<String> = unused.iter().map(|(k, n)| format!("{} ({n})", super::shown(k))).collect();
        println!("      fields this reader does not use, not judged: {}", listed.join(", "));
    }
    match j.source {
        Source::Team(_, _, Some(t)) => {
            println!("      tasks: {} read from {}", t.tasks, t.dir.display())
        }
        Source::Team(dir, r, None) => match crate::history::claude::tasks::linked(dir, r.team.name.as_deref()) {
            Some(link) => println!(
                "      tasks: {} is a symbolic link: only real folders are read, not links; not read",
                super::shown(&link.display().to_string())
            ),
            None => println!(
                "      tasks: no tasks folder found (looked for tasks/ in the team folder, and for ~/.claude/tasks/<team> \
                 beside ~/.claude/teams/<team>)"
            ),
        },
        _ => {}
    }
    // Names, places and words come from the files: shown, never let act
    // on the terminal or pass for a line of the report.
    let mut alerts = h.events.iter().filter_map(|e| match &e.event {
        crate::trace::Event::Alert { text, .. } => Some(text),
        _ => None,
    });
    for text in alerts.by_ref().take(ALERTS_LISTED) {
        println!("      ⚠ {}", super::shown(text));
    }
    let more_alerts = alerts.count();
    if more_alerts > 0 {
        println!("      ⚠ … and {more_alerts} more (--format json lists every one)");
    }
    super::print_unjudged(&h.unjudged, " (--format json lists every one)");
    verdicts(j);
    // A folder can break an invariant at every one of a million entries:
    // the first are shown, the rest counted.
    for (v, witness) in j.violations.iter().zip(j.witnesses).take(LISTED) {
        let cross = crate::color::paint("✗", crate::color::Paint::Fail, crate::color::stdout());
        println!("      {cross} invariant {} — {} (at {})", v.invariant, super::shown(&v.detail), v.at);
        let line = v.event.and_then(|i| h.lines.get(i).copied());
        match (v.event, line, v.event.and_then(|i| h.origin.get(i))) {
            (Some(i), Some(line), Some(file)) => {
                println!("        {}:{line}: {}", super::shown(file), super::shown(&h.events[i].describe(&h.names)))
            }
            (Some(i), Some(line), None) => {
                println!("        line {line}: {}", super::shown(&h.events[i].describe(&h.names)))
            }
            _ => {}
        }
        match witness.as_deref() {
            Some([one]) => {
                println!(
                    "        witness: {} alone shows it",
                    super::shown(&crate::history::claude::witness::shown(one))
                )
            }
            Some(w) => {
                let places: Vec<String> = w.iter().map(|p| crate::history::claude::witness::shown(p)).collect();
                let places = places.join(", ");
                println!("        witness: {} (without any one of them it does not show)", super::shown(&places));
            }
            None => {}
        }
    }
    if j.violations.len() > LISTED {
        let more = j.violations.len() - LISTED;
        println!("      ✗ … and {more} more broken (--format json lists every one)");
    }
}

/// Each invariant's standing, when the files cannot show them all; the
/// clean bill, when there is one.
fn verdicts(j: &Judged) {
    let h = j.h;
    let unknown: Vec<(&crate::oracle::Invariant, &String)> = j
        .standings
        .iter()
        .filter_map(|(i, s)| match s {
            Standing::Unknown(why) => Some((i, why)),
            _ => None,
        })
        .collect();
    let whole = match j.source {
        Source::Tasks(_) => {
            // Nothing here is held: a tasks folder decides no invariant.
            let what =
                if h.events.is_empty() { "the tasks agree with each other" } else { "what the tasks show is above" };
            println!("      {what}; no invariant is judged from tasks alone:");
            ""
        }
        Source::Team(..) => "in what the folder shows",
        Source::Inboxes(_) => "in what the files show",
        Source::Transcript(_) => "in what the transcript shows",
        Source::Trace => "",
    };
    match (j.violations.is_empty(), h.unjudged.len()) {
        _ if matches!(j.source, Source::Tasks(_)) => {}
        (true, 0) if whole.is_empty() => println!("      every invariant held"),
        (true, 0) => println!("      every invariant held {whole}; what it cannot show is unknown, not passed:"),
        (true, n) => println!(
            "      every invariant held in what could be read; {} could not be, so this is no clean bill",
            crate::words::plural(n as u64, "entry")
        ),
        _ => {}
    }
    if unknown.is_empty() {
        return;
    }
    let held: Vec<&str> = j.standings.iter().filter(|(_, s)| *s == Standing::Held).map(|(i, _)| i.name()).collect();
    println!("      invariants: {}", crate::history::standing::counted(j.standings));
    if !held.is_empty() {
        println!("        held: {}", held.join(", "));
    }
    // Invariants unknown for one reason are named on one line (a tasks
    // folder leaves every one unknown for the same reason).
    let mut reasons: Vec<(&String, Vec<&str>)> = Vec::new();
    for (i, why) in unknown {
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(i.name()),
            None => reasons.push((why, vec![i.name()])),
        }
    }
    for (why, names) in reasons {
        println!("        unknown: {} — {why}", names.join(", "));
    }
    // What inbox files cannot tell: a read cut what it read.
    let never_issued = j.violations.iter().any(|v| v.detail.contains("never issued"));
    match j.source {
        Source::Inboxes(_) if never_issued => println!(
            "      note: an answer whose request is in no file may answer a request a read took and truncated \
             away; only a trace or the offset drain's whole files can tell the two apart"
        ),
        Source::Team(..) if never_issued => println!(
            "      note: an answer whose request is in no file may answer one a whole-file rewrite lost \
             (claude-code#53896); only the lead's transcript can tell the two apart"
        ),
        _ => {}
    }
}

/// The fields of the files' entries this reader does not use, with how
/// many entries hold each (a tasks folder's as `task.<field>`).
fn fields_not_read(source: &Source) -> std::collections::BTreeMap<&str, usize> {
    let mut all: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    if let Some(r) = source.reading() {
        all.extend(r.unused_fields.iter().map(|(k, n)| (k.as_str(), *n)));
    }
    if let Source::Team(_, _, Some(t)) | Source::Tasks(t) = source {
        all.extend(t.unused_fields.iter().map(|(k, n)| (k.as_str(), *n)));
    }
    all
}

/// The report for programs: one document, written as it is serialised.
fn json(j: &Judged, shown: &str) {
    let h = j.h;
    // Written as it is serialised: a folder's history may hold half a
    // million violations, which as one JSON value would cost memory
    // several times the input's (docs/audit.md states the bound).
    let doc = Doc {
        path: shown,
        scenario: h.scenario.as_deref(),
        seed: h.seed,
        events: h.events.len(),
        // The text's PASS: a read stopped at the bound reads STOPPED.
        passed: j.violations.is_empty() && !j.source.bounded(),
        unjudged: h.unjudged.iter().map(|(w, why)| serde_json::json!({"where": w, "why": why})).collect(),
        violations: Found { h, list: j.violations, witnesses: j.witnesses },
        alerts: h
            .events
            .iter()
            .filter_map(|e| match &e.event {
                crate::trace::Event::Alert { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
        invariants: j
            .standings
            .iter()
            .map(|(i, s)| {
                let why = match s {
                    Standing::Unknown(why) => Some(why.as_str()),
                    _ => None,
                };
                serde_json::json!({"name": i.name(), "verdict": s.word(), "why": why})
            })
            .collect(),
        generation: j.source.reading().map(crate::history::claude::generation),
        stopped_at_bound: j.source.bounded(),
        fields_not_read: fields_not_read(j.source),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = serde_json::to_writer_pretty(&mut out, &doc);
    let _ = std::io::Write::write_all(&mut out, b"\n");
}

/// `audit --format json`'s document (`$defs/audit` in docs/report.schema.json).
#[derive(serde::Serialize)]
struct Doc<'a> {
    path: &'a str,
    scenario: Option<&'a str>,
    seed: Option<u64>,
    events: usize,
    passed: bool,
    violations: Found<'a>,
    /// What the reader noted without judging it: lines that are not
    /// messages, links skipped, an id used again for another request.
    alerts: Vec<&'a str>,
    /// Entries the reader could not interpret: where, and why.
    unjudged: Vec<serde_json::Value>,
    /// Each invariant: held, broken, or unknown (with why: what the files
    /// cannot show).
    invariants: Vec<serde_json::Value>,
    /// Which generation of Claude Code wrote the files, told from their
    /// shapes; null for other histories.
    generation: Option<String>,
    /// The read stopped at the folder's bound (exit 3 with no violation).
    stopped_at_bound: bool,
    /// Fields of a Claude Code folder's entries (or a transcript's lines)
    /// this reader does not use, with how many entries hold each: what
    /// they say is not judged.
    fields_not_read: std::collections::BTreeMap<&'a str, usize>,
}

/// The violations, each serialised as it is written.
struct Found<'a> {
    h: &'a crate::history::History,
    list: &'a [crate::oracle::Violation],
    witnesses: &'a [Option<Vec<String>>],
}

impl serde::Serialize for Found<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let h = self.h;
        s.collect_seq(self.list.iter().zip(self.witnesses).map(|(v, w)| {
            let witness =
                w.as_ref().map(|w| w.iter().map(|p| crate::history::claude::witness::shown(p)).collect::<Vec<_>>());
            serde_json::json!({
                "witness": witness,
                "invariant": v.invariant.name(),
                "at_ms": v.at.0,
                "line": v.event.and_then(|i| h.lines.get(i).copied()),
                "file": v.event.and_then(|i| h.origin.get(i)),
                "detail": v.detail,
            })
        }))
    }
}

/// Writes `h` as a scenario file to `path`, after reading it back as `run`
/// would (a file this program cannot run is never left behind). Returns a
/// count of its steps, in words.
fn write_scenario(
    h: &crate::history::History,
    shown: &str,
    violations: &[crate::oracle::Violation],
    path: &std::path::Path,
) -> Result<String, String> {
    let found: Vec<String> = violations.iter().map(|v| format!("{} ({})", v.invariant, v.detail)).collect();
    let text = crate::history::scenario::to_scenario(h, shown, &found).map_err(|e| e.to_string())?;
    let written = path.display().to_string();
    if let Err(e) = crate::scenario::load_str(&written, &text) {
        return Err(format!(
            "{written}: the scenario written from {shown} does not load ({e:?}): a bug, please report it"
        ));
    }
    let steps = text.matches("[[step]]").count();
    // As every writer does: never through a link, whole or not at all.
    crate::output::write(path, &text)?;
    Ok(crate::words::plural(steps as u64, "step"))
}
