//! A Claude Code tasks folder, `~/.claude/tasks/<team>/`: one task a file,
//! `<n>.json` (`{id, subject, description, activeForm, status, owner,
//! blocks, blockedBy, metadata}`), read into tasks; and what the tasks say
//! of each other and of their owners, checked. Written against Claude Code
//! 2.1.x (docs/claude-code.md, "Tasks", gives the versions and the evidence).
//!
//! Nothing here guesses: a file that is not a task, a task whose id is not
//! its file's name, a status this reader does not know, is kept as
//! unjudged with its place and reason; a field it does not use is counted,
//! never fatal. What it finds is news (an alert), not a broken invariant:
//! the oracle's invariants are about messages, and a task file is none.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fs::FileType;
use std::path::{Path, PathBuf};

/// The fields of a task file this reader knows.
const TASK_FIELDS: &[&str] =
    &["id", "subject", "description", "activeForm", "status", "owner", "blocks", "blockedBy", "metadata"];

/// The most files of one tasks folder looked at: past it the rest are
/// counted, not listed, so that a folder of millions of files costs no more
/// memory than this many.
pub const MOST_FILES: usize = 100_000;

/// Where a task stands, as Claude Code 2.1 writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pending,
    InProgress,
    Completed,
}

impl Status {
    fn read(word: &str) -> Option<Status> {
        match word {
            "pending" => Some(Status::Pending),
            "in_progress" => Some(Status::InProgress),
            "completed" => Some(Status::Completed),
            _ => None,
        }
    }

    /// The status in words, for a sentence.
    pub fn words(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in progress",
            Status::Completed => "completed",
        }
    }
}

/// One task, as its file says.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// Where it is: `tasks/3.json`.
    pub place: String,
    /// Its id, which is its file's name (`3`).
    pub id: String,
    /// `None`: a status this reader does not know (the task is unjudged,
    /// and no check that needs its status is made).
    pub status: Option<Status>,
    /// Who owns it: a teammate's name (or its agent id, `bob@team`); absent
    /// or empty, nobody.
    pub owner: Option<String>,
    /// Its `subject`, which a `task_assignment` names it by.
    pub subject: Option<String>,
    /// The tasks that wait on this one.
    pub blocks: Vec<String>,
    /// The tasks this one waits on.
    pub blocked_by: Vec<String>,
}

/// What a tasks folder held, as read.
#[derive(Clone, Debug, Default)]
pub struct Tasks {
    /// In the order of their ids (2 before 10).
    pub tasks: Vec<Task>,
    /// Files it could not interpret (or tasks whose status it does not
    /// know): where, and why.
    pub unjudged: Vec<(String, String)>,
    /// Fields it met and does not use, with how often.
    pub unused_fields: BTreeMap<String, usize>,
    /// The ids of task files that could not be read: a task that names one
    /// does not name a task that does not exist.
    pub unread: BTreeSet<String>,
    /// Whether every file was looked at (not so past [`MOST_FILES`]): if
    /// not, a task named nowhere may be in a file not looked at.
    pub whole: bool,
    /// The read stopped at a bound (the files' bytes, or their number):
    /// what lies past it was not read.
    pub bounded: bool,
}

/// A task file's id, from its name: `3.json` is task 3.
fn id_of(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".json")?;
    (!stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// Whether `dir` is a tasks folder: it holds a regular file named `<n>.json`.
pub fn is_tasks_folder(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| {
        d.any(|e| {
            e.is_ok_and(|e| {
                e.file_name().to_str().is_some_and(|n| id_of(n).is_some()) && e.file_type().is_ok_and(|t| t.is_file())
            })
        })
    })
}

/// The tasks folder of the team folder `team`: its own `tasks/` (as the
/// fixtures keep it), or `tasks/<team>` beside `teams/<team>` (as Claude
/// Code keeps them: `~/.claude/teams/my-team` and `~/.claude/tasks/my-team`),
/// by the team folder's name or by the team's `name` as the runtime makes a
/// folder name of it (each character other than a letter, digit, `_` or `-`
/// made `-`). Only a folder is taken, never a link to one.
pub fn find(team: &Path, name: Option<&str>) -> Option<PathBuf> {
    let a_folder = |p: &PathBuf| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    places(team, name).into_iter().find(a_folder)
}

/// Where [`find`] looked that holds a symbolic link instead of a folder
/// (the first): not followed, and said so, rather than "not found".
pub fn linked(team: &Path, name: Option<&str>) -> Option<PathBuf> {
    let a_link = |p: &PathBuf| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    places(team, name).into_iter().find(a_link)
}

/// Where a team's tasks may be, in the order looked at: `tasks/` inside
/// it, then `~/.claude/tasks/<folder>` and `~/.claude/tasks/<name>` beside
/// `~/.claude/teams/<folder>`.
fn places(team: &Path, name: Option<&str>) -> Vec<PathBuf> {
    let mut out = vec![team.join("tasks")];
    // `audit .` has no parent to go up to until the path is made whole.
    let Ok(whole) = std::fs::canonicalize(team) else { return out };
    let (Some(teams), Some(folder)) = (whole.parent(), whole.file_name().and_then(|f| f.to_str())) else { return out };
    if teams.file_name().is_none_or(|n| n != "teams") {
        return out;
    }
    let Some(tasks) = teams.parent().map(|p| p.join("tasks")) else { return out };
    let named = name.map(folder_name).filter(|n| !n.is_empty());
    out.extend(std::iter::once(folder.to_string()).chain(named).map(|n| tasks.join(n)));
    out
}

/// A team's name as the runtime makes a folder name of it.
fn folder_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' }).collect()
}

/// Reads the tasks folder `dir`: every `<n>.json` in the order of their
/// ids. Files whose name starts with a dot (the runtime's `.lock` and
/// `.highwatermark`) are the runtime's own and skipped; any other file is
/// counted as unjudged. `limit` bounds the files' bytes in all; only
/// regular files inside the folder are read (a link is skipped, and said so).
pub fn read(dir: &Path, limit: u64) -> Tasks {
    let mut t = Tasks { whole: true, ..Tasks::default() };
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) => {
            t.unjudged.push(("tasks".into(), format!("the folder cannot be listed: {e}")));
            t.whole = false;
            return t;
        }
    };
    let mut files: Vec<(String, Option<FileType>)> = Vec::new();
    let mut more = 0usize;
    for e in listing.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if files.len() == MOST_FILES {
            more += 1;
            continue;
        }
        files.push((name, e.file_type().ok()));
    }
    if more > 0 {
        t.whole = false;
        t.bounded = true;
        let why = format!("{more} more files not looked at: at most {MOST_FILES} files of a tasks folder are read");
        t.unjudged.push(("tasks".into(), why));
    }
    // Task files by their ids as numbers (2 before 10), then the others.
    files.sort_by(|(a, _), (b, _)| {
        let key = |n: &str| (id_of(n).is_none(), id_of(n).map_or(0, str::len), n.to_string());
        key(a).cmp(&key(b))
    });
    let mut left = limit;
    for (name, kind) in files {
        file(&mut t, dir, &name, kind, (&mut left, limit));
    }
    t
}

/// One file of the folder, by its name; `left` is what is left of the
/// folder's bound, `limit` the bound.
fn file(t: &mut Tasks, dir: &Path, name: &str, kind: Option<FileType>, (left, limit): (&mut u64, u64)) {
    // The name is printed: a control character in it must not act on the terminal.
    let place = format!("tasks/{}", crate::input::shown(name));
    let Some(id) = id_of(name) else {
        let what = if kind.is_some_and(|k| k.is_dir()) { "a folder" } else { "a file" };
        t.unjudged.push((place, format!("{what} that is not a task: a task's file is named <n>.json (3.json)")));
        return;
    };
    let refused = match kind {
        Some(k) if k.is_symlink() => Some("a symbolic link: only regular files inside the folder are read; skipped"),
        Some(k) if !k.is_file() => Some("not a regular file (a folder, a pipe or a device): skipped"),
        _ => None,
    };
    if let Some(why) = refused {
        t.unread.insert(id.to_string());
        t.unjudged.push((place, why.to_string()));
        return;
    }
    let text = match crate::input::read_regular(&dir.join(name), *left) {
        Ok(text) => text,
        Err(e) => {
            t.bounded |= matches!(e, crate::input::ReadError::TooBig { .. });
            t.unread.insert(id.to_string());
            t.unjudged
                .push((place, e.in_folder(&format!("a tasks folder's files are read up to {limit} bytes in all"))));
            return;
        }
    };
    *left -= text.len() as u64;
    let why = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => return one(t, id, place, &m),
        Ok(_) => "not a JSON object: a task file holds one task".to_string(),
        Err(e) => super::folder::not_json(&text, &e),
    };
    t.unread.insert(id.to_string());
    t.unjudged.push((place, why));
}

/// The fields Claude Code 2.1 writes in every task besides `id` and
/// `status` (its schema: docs/claude-code.md, "Tasks").
const WRITTEN_ALWAYS: [&str; 4] = ["subject", "description", "blocks", "blockedBy"];

/// One task file's object, at `place`.
fn one(t: &mut Tasks, id: &str, place: String, m: &Map<String, Value>) {
    match task(m, id, &place) {
        Ok((task, unknown_status)) => {
            for k in m.keys().filter(|k| !TASK_FIELDS.contains(&k.as_str())) {
                *t.unused_fields.entry(format!("task.{k}")).or_default() += 1;
            }
            let missing: Vec<String> =
                WRITTEN_ALWAYS.iter().filter(|k| !m.contains_key(**k)).map(|k| format!("\"{k}\"")).collect();
            if let Some(why) = unknown_status {
                t.unjudged.push((place, why));
            } else if !missing.is_empty() {
                // A file of a shape half-known: judged for what it holds, never a clean bill.
                let why = format!(
                    "no {}, which Claude Code 2.1 writes in every task: read for what it holds",
                    missing.join(", ")
                );
                t.unjudged.push((place, why));
            }
            t.tasks.push(task);
        }
        Err(why) => {
            t.unread.insert(id.to_string());
            t.unjudged.push((place, why));
        }
    }
}

/// The task a file's object describes, with why its status is not judged
/// when it is not one this reader knows; or why it is no task at all.
fn task(m: &Map<String, Value>, id: &str, place: &str) -> Result<(Task, Option<String>), String> {
    // The runtime names a task's file by its id; one without an id is read by that name.
    let written = match m.get("id") {
        None => id.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err("its \"id\" is neither text nor a number: which task it is cannot be told".into()),
    };
    if written != id {
        return Err(format!("its id {written:?} is not its file's name ({id}.json): which task it is cannot be told"));
    }
    let word = match m.get("status") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err("its \"status\" is not a word: whether it is done cannot be told".into()),
        None => return Err("no \"status\": whether it is done cannot be told".into()),
    };
    let status = Status::read(word);
    let unknown = status.is_none().then(|| {
        format!(
            "status {word:?} is not one Claude Code 2.1 writes (pending, in_progress, completed): what needs this \
             task's status is not judged"
        )
    });
    let owner = match m.get("owner") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("its \"owner\" is not a name".into()),
    };
    let task = Task {
        place: place.to_string(),
        id: id.to_string(),
        status,
        owner,
        subject: m.get("subject").and_then(Value::as_str).map(str::to_string),
        blocks: ids(m, "blocks")?,
        blocked_by: ids(m, "blockedBy")?,
    };
    Ok((task, unknown))
}

/// A list of task ids (written as text, or as numbers).
fn ids(m: &Map<String, Value>, field: &str) -> Result<Vec<String>, String> {
    let not = || format!("its \"{field}\" is not a list of task ids");
    match m.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => {
            // An id listed twice is one link (two million of one id were two
            // million alerts).
            let mut seen = HashSet::new();
            let mut out = Vec::new();
            for v in list {
                let id = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(not()),
                };
                if seen.insert(id.clone()) {
                    out.push(id);
                }
            }
            Ok(out)
        }
        Some(_) => Err(not()),
    }
}

/// Who the team is, as its folder shows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Roster<'a> {
    /// Every name on the team, the lead's with them; empty when the team's
    /// roster is not known (a tasks folder audited alone).
    pub members: &'a [String],
    /// Teammates the runtime said had ended, and that did not come back.
    pub ended: &'a [String],
    /// Each task's last `task_assignment` in the inboxes.
    pub assigned: &'a [Assigned],
}

/// A task the runtime said it assigned (`task_assignment`), the last time
/// it did: the task as the notice names it (its subject, or its id), to
/// whom, and where the notice is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assigned {
    pub task: String,
    pub to: String,
    pub place: String,
}

/// What the tasks say that is news, each sentence naming the task files
/// it is about.
pub fn alerts(t: &Tasks, roster: Roster) -> Vec<String> {
    let by_id: HashMap<&str, &Task> = t.tasks.iter().map(|k| (k.id.as_str(), k)).collect();
    let mut said = Said::default();
    done_before_what_it_waits_on(t, &by_id, &mut said);
    said.check_done("tasks completed before what they wait on");
    wait_on_each_other(t, &mut said);
    said.check_done("knots of tasks waiting on each other");
    links_disagree(t, &by_id, &mut said);
    said.check_done("links the two tasks' files disagree on");
    if t.whole {
        no_such_task(t, &by_id, &mut said);
        said.check_done("links to tasks no file holds");
    }
    owners(t, roster, &mut said);
    said.check_done("tasks whose owner is not on the team or has ended");
    assigned_elsewhere(t, roster.assigned, &mut said);
    said.check_done("tasks last assigned to another than their owner");
    said.lines
}

/// The alerts of the checks, each check's first [`Said::LISTED`] worded and
/// the rest counted: a folder of a thousand tasks each linked to all the
/// others would otherwise say a million sentences (and hold them).
#[derive(Default)]
struct Said {
    lines: Vec<String>,
    /// Alerts of the check in hand so far.
    in_check: usize,
}

impl Said {
    const LISTED: usize = 20;

    fn say(&mut self, text: impl FnOnce() -> String) {
        if self.in_check < Self::LISTED {
            self.lines.push(text());
        }
        self.in_check += 1;
    }

    /// Ends a check: how many more of `what` there were, if any.
    fn check_done(&mut self, what: &str) {
        if self.in_check > Self::LISTED {
            self.lines.push(format!(
                "… and {} more {what} (the first {} are above)",
                self.in_check - Self::LISTED,
                Self::LISTED
            ));
        }
        self.in_check = 0;
    }
}

/// A task completed while a task it waits on is not.
fn done_before_what_it_waits_on(t: &Tasks, by_id: &HashMap<&str, &Task>, said: &mut Said) {
    for k in t.tasks.iter().filter(|k| k.status == Some(Status::Completed)) {
        for b in k.blocked_by.iter().filter_map(|b| by_id.get(b.as_str())) {
            let Some(status) = b.status.filter(|s| *s != Status::Completed) else { continue };
            said.say(|| {
                format!(
                    "{} is completed, but task {}, which it waits on (blockedBy), is {} ({}): it was marked done \
                 before the work it depends on",
                    k.place,
                    b.id,
                    status.words(),
                    b.place
                )
            });
        }
    }
}

/// Tasks that wait on each other: none of them can start (a deadlock).
/// Each knot of them is named once, by one cycle through it.
fn wait_on_each_other(t: &Tasks, said: &mut Said) {
    let index: HashMap<&str, usize> = t.tasks.iter().enumerate().map(|(i, k)| (k.id.as_str(), i)).collect();
    let waits: Vec<Vec<usize>> =
        t.tasks.iter().map(|k| k.blocked_by.iter().filter_map(|b| index.get(b.as_str()).copied()).collect()).collect();
    let (knots, knot_of) = knots(&waits);
    for knot in knots {
        // Its first task in id order starts the cycle named.
        let Some(&start) = knot.iter().min() else { continue };
        let cycle = cycle_through(start, &waits, &knot_of);
        let all_done = knot.iter().all(|&i| t.tasks[i].status == Some(Status::Completed));
        let first = &t.tasks[start];
        if cycle.len() == 1 {
            let why = if all_done { "yet it is completed" } else { "it can never start" };
            said.say(|| format!("{} waits on itself (blockedBy): {why}", first.place));
            continue;
        }
        let ids: Vec<&str> = cycle.iter().chain([&start]).map(|&i| t.tasks[i].id.as_str()).collect();
        let places: Vec<&str> = cycle.iter().map(|&i| t.tasks[i].place.as_str()).collect();
        let why = if all_done {
            "yet all are completed: one of them cannot have waited for the others"
        } else {
            "none of them can start, a deadlock"
        };
        let mut text =
            format!("tasks {} wait on each other (blockedBy): {why} ({})", ids.join(" → "), places.join(", "));
        if knot.len() > cycle.len() {
            let more = crate::words::plural((knot.len() - cycle.len()) as u64, "more task");
            text.push_str(&format!("; {more} caught in the same knot"));
        }
        said.say(|| text);
    }
}

/// The knots of `waits` (task → the tasks it waits on): each set of tasks
/// that can reach each other through what they wait on, with a cycle in it,
/// as indexes; and each task's knot number (or `usize::MAX`). Tarjan's
/// algorithm, without recursion: a chain of 100,000 tasks must not
/// overflow the stack.
fn knots(waits: &[Vec<usize>]) -> (Vec<Vec<usize>>, Vec<usize>) {
    const NONE: usize = usize::MAX;
    let n = waits.len();
    let (mut order, mut low, mut on_stack) = (vec![NONE; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut found, mut knot_of) = (Vec::new(), 0, Vec::new(), vec![NONE; n]);
    for root in 0..n {
        if order[root] != NONE {
            continue;
        }
        // Each visit in hand, with the next of its edges to follow.
        let mut visits = vec![(root, 0)];
        (order[root], low[root], on_stack[root]) = (next, next, true);
        next += 1;
        stack.push(root);
        while let Some(&(v, edge)) = visits.last() {
            if let Some(&w) = waits[v].get(edge) {
                if let Some(top) = visits.last_mut() {
                    top.1 += 1;
                }
                if order[w] == NONE {
                    (order[w], low[w], on_stack[w]) = (next, next, true);
                    next += 1;
                    stack.push(w);
                    visits.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            visits.pop();
            if let Some(&(u, _)) = visits.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] != order[v] {
                continue;
            }
            let mut part = Vec::new();
            while let Some(w) = stack.pop() {
                on_stack[w] = false;
                part.push(w);
                if w == v {
                    break;
                }
            }
            if part.len() > 1 || waits[v].contains(&v) {
                for &w in &part {
                    knot_of[w] = found.len();
                }
                found.push(part);
            }
        }
    }
    (found, knot_of)
}

/// The shortest cycle from `start` back to it, through its own knot, as
/// the tasks in the order each waits on the next (`start` first).
fn cycle_through(start: usize, waits: &[Vec<usize>], knot_of: &[usize]) -> Vec<usize> {
    let mut came_from: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &waits[v] {
            if w == start {
                let mut path = vec![v];
                while let Some(&u) = came_from.get(path.last().unwrap_or(&start)) {
                    path.push(u);
                }
                path.reverse();
                return path;
            }
            if knot_of[w] == knot_of[start] && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}

/// `blocks` and `blockedBy` that do not say the same: the runtime writes
/// each side of a link separately, and goes by `blockedBy` alone when a
/// teammate claims a task.
fn links_disagree(t: &Tasks, by_id: &HashMap<&str, &Task>, said: &mut Said) {
    // Each task's links as sets: a thousand tasks each linked to all the
    // others made the lists' own lookups cubic.
    let sets = |links: fn(&Task) -> &Vec<String>| -> HashMap<&str, HashSet<&str>> {
        t.tasks.iter().map(|k| (k.id.as_str(), links(k).iter().map(String::as_str).collect())).collect()
    };
    let (blocks, blocked_by) = (sets(|k| &k.blocks), sets(|k| &k.blocked_by));
    let has =
        |sets: &HashMap<&str, HashSet<&str>>, task: &str, id: &str| sets.get(task).is_some_and(|s| s.contains(id));
    for k in &t.tasks {
        for other in k.blocks.iter().filter_map(|b| by_id.get(b.as_str())) {
            if !has(&blocked_by, &other.id, &k.id) {
                said.say(|| {
                    format!(
                    "{} says it blocks task {}, but {} does not wait on task {} (not in its blockedBy): the two files \
                     disagree, and the runtime goes by blockedBy",
                    k.place, other.id, other.place, k.id
                )
                });
            }
        }
        for other in k.blocked_by.iter().filter_map(|b| by_id.get(b.as_str())) {
            if !has(&blocks, &other.id, &k.id) {
                said.say(|| {
                    format!(
                    "{} waits on task {} (blockedBy), but {} does not say it blocks task {}: the two files disagree",
                    k.place, other.id, other.place, k.id
                )
                });
            }
        }
    }
}

/// A link to a task no file holds (nor a file that could not be read).
fn no_such_task(t: &Tasks, by_id: &HashMap<&str, &Task>, said: &mut Said) {
    let missing = |id: &&String| !by_id.contains_key(id.as_str()) && !t.unread.contains(id.as_str());
    for k in &t.tasks {
        for id in k.blocked_by.iter().filter(missing) {
            said.say(|| {
                format!(
                    "{} waits on task {}, which no file in the folder holds: the runtime counts a missing task as no \
                 blocker",
                    k.place,
                    crate::input::shown(id)
                )
            });
        }
        for id in k.blocks.iter().filter(missing) {
            said.say(|| {
                format!(
                    "{} says it blocks task {}, which no file in the folder holds",
                    k.place,
                    crate::input::shown(id)
                )
            });
        }
    }
}

/// Owners not on the team, and tasks in progress whose owner has ended.
fn owners(t: &Tasks, roster: Roster, said: &mut Said) {
    let members: HashSet<&str> = roster.members.iter().map(String::as_str).collect();
    for k in &t.tasks {
        let Some(owner) = &k.owner else { continue };
        // An owner may be written as the agent's id, `bob@my-team`.
        let name = owner.split('@').next().unwrap_or(owner);
        let shown = crate::input::shown(owner);
        // A task done is done, whoever has left since: the runtime takes a
        // teammate that shut down off config.json's members.
        if !members.is_empty() && !members.contains(name) && k.status != Some(Status::Completed) {
            said.say(|| {
                format!(
                    "{} is owned by {shown}, who is not in the team (config.json): nobody on the team is doing it",
                    k.place
                )
            });
        }
        if k.status == Some(Status::InProgress) && roster.ended.iter().any(|m| m == name) {
            said.say(|| {
                format!(
                "{} is in progress, owned by {shown}, whom the runtime said had ended (teammate_terminated): nobody \
                 is working on it (an ended teammate's unfinished tasks are given back as pending; this one was not)",
                k.place
            )
            });
        }
    }
}

/// A task not done whose file names one owner while the last assignment of
/// it the inboxes hold went to another: that teammate was told the task is
/// its own and never told otherwise (a reassignment sends the new owner a
/// notice too), so two may be working on it. The files cannot tell whether
/// the first let it go, so this is an alert, not a broken invariant.
fn assigned_elsewhere(t: &Tasks, assigned: &[Assigned], said: &mut Said) {
    if assigned.is_empty() {
        return;
    }
    // In time order: the later of a task's notices by id and by subject is its last.
    let rank: HashMap<&str, usize> = assigned.iter().enumerate().map(|(i, a)| (a.task.as_str(), i)).collect();
    for k in &t.tasks {
        let Some(owner) = &k.owner else { continue };
        if k.status == Some(Status::Completed) {
            continue;
        }
        let by_id = rank.get(k.id.as_str());
        let by_subject = k.subject.as_deref().and_then(|s| rank.get(s));
        let Some(&i) = by_id.max(by_subject) else { continue };
        let a = &assigned[i];
        let name = |who: &str| who.split('@').next().unwrap_or(who).to_string();
        if name(&a.to) != name(owner) {
            said.say(|| {
                format!(
                    "{} is owned by {}, but the last assignment of it went to {} ({}) and nothing since tells {} \
                     otherwise: two teammates may both be working on it",
                    k.place,
                    crate::input::shown(owner),
                    crate::input::shown(&a.to),
                    a.place,
                    crate::input::shown(&a.to)
                )
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("handshake-cc-tasks-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    /// A task file's text: `id`, `status`, `owner`, `blocks`, `blockedBy`.
    fn task(id: &str, status: &str, owner: &str, blocks: &[&str], blocked_by: &[&str]) -> String {
        serde_json::json!({
            "id": id, "subject": format!("Task {id}"), "description": "", "activeForm": "", "status": status,
            "owner": owner, "blocks": blocks, "blockedBy": blocked_by, "metadata": {}
        })
        .to_string()
    }

    /// The alerts of a folder of `files`, with `roster`.
    fn said(files: &[(&str, String)], roster: Roster) -> Vec<String> {
        let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let dir = folder(&files);
        let t = read(&dir, 1 << 20);
        let _ = std::fs::remove_dir_all(dir);
        alerts(&t, roster)
    }

    #[test]
    fn a_tasks_folder_reads_each_task_in_id_order_and_skips_the_runtimes_dotfiles() {
        let dir = folder(&[
            ("10.json", &task("10", "pending", "", &[], &[])),
            ("2.json", &task("2", "completed", "bob", &[], &[]).replacen("\"id\"", "\"createdAt\":1,\"id\"", 1)),
            (".lock", ""),
            (".highwatermark", "10"),
        ]);
        assert!(is_tasks_folder(&dir));
        let t = read(&dir, 1 << 20);
        let ids: Vec<(&str, &str)> = t.tasks.iter().map(|k| (k.place.as_str(), k.id.as_str())).collect();
        assert_eq!(ids, [("tasks/2.json", "2"), ("tasks/10.json", "10")]);
        assert_eq!(t.tasks[0].owner.as_deref(), Some("bob"));
        assert_eq!(t.tasks[1].owner, None, "an empty owner is nobody");
        assert!(t.unjudged.is_empty(), "{:?}", t.unjudged);
        assert_eq!(t.unused_fields.get("task.createdAt"), Some(&1));
        assert!(alerts(&t, Roster::default()).is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A Claude Code user's review: `{"id":"1","status":"completed","owner":"bob"}`
    /// passed as a task like any other. A task without the fields every
    /// Claude Code 2.1 task has is read for what it holds, and said.
    #[test]
    fn a_task_without_the_fields_every_task_has_is_read_and_said() {
        let dir = folder(&[("1.json", r#"{"id":"1","status":"completed","owner":"bob"}"#)]);
        let t = read(&dir, 1 << 20);
        assert_eq!(t.tasks.len(), 1, "still read");
        assert_eq!(t.unjudged.len(), 1, "{:?}", t.unjudged);
        assert_eq!(t.unjudged[0].0, "tasks/1.json");
        assert!(
            t.unjudged[0].1.starts_with("no \"subject\", \"description\", \"blocks\", \"blockedBy\""),
            "{:?}",
            t.unjudged
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    #[cfg(unix)]
    fn each_bad_file_is_unjudged_with_its_reason_and_the_rest_still_read() {
        let dir = folder(&[
            ("1.json", "[1, 2]"),
            ("2.json", &task("2", "blocked", "", &[], &[])),
            ("3.json", &task("4", "pending", "", &[], &[])),
            // A file cut short mid-write.
            ("4.json", &task("4", "pending", "", &[], &[])[..12]),
            ("5.json", &task("5", "pending", "", &[], &["1", "2", "3", "4"])),
            ("notes.txt", "remember the parser"),
        ]);
        std::os::unix::fs::symlink("/etc/passwd", dir.join("6.json")).unwrap();
        let t = read(&dir, 1 << 20);
        let said: Vec<(&str, &str)> = t.unjudged.iter().map(|(w, why)| (w.as_str(), why.as_str())).collect();
        assert_eq!(said[0], ("tasks/1.json", "not a JSON object: a task file holds one task"));
        assert_eq!(said[1].0, "tasks/2.json");
        assert!(said[1].1.starts_with("status \"blocked\" is not one Claude Code 2.1 writes"), "{said:?}");
        assert_eq!(
            said[2],
            ("tasks/3.json", "its id \"4\" is not its file's name (3.json): which task it is cannot be told")
        );
        assert_eq!(said[3].0, "tasks/4.json");
        assert!(said[3].1.starts_with("not JSON:"), "{said:?}");
        assert_eq!(
            said[4],
            ("tasks/6.json", "a symbolic link: only regular files inside the folder are read; skipped")
        );
        assert_eq!(said[5], ("tasks/notes.txt", "a file that is not a task: a task's file is named <n>.json (3.json)"));
        assert_eq!(said.len(), 6);
        // A task of unknown status is kept, its status not judged.
        let kept: Vec<(&str, Option<Status>)> = t.tasks.iter().map(|k| (k.id.as_str(), k.status)).collect();
        assert_eq!(kept, [("2", None), ("5", Some(Status::Pending))]);
        // Task 5 waits on files that could not be read: none of them is said to be missing.
        assert!(
            alerts(&t, Roster::default()).iter().all(|a| !a.contains("no file")),
            "{:?}",
            alerts(&t, Roster::default())
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_folder_past_its_byte_bound_is_not_read_past_it() {
        let one = task("1", "pending", "", &[], &[]);
        let dir = folder(&[("1.json", &one), ("2.json", &task("2", "pending", "", &[], &[]))]);
        let t = read(&dir, one.len() as u64 + 5);
        assert_eq!(t.tasks.len(), 1);
        assert_eq!(t.unjudged.len(), 1);
        assert!(t.unjudged[0].0 == "tasks/2.json" && t.unjudged[0].1.contains("at most"), "{:?}", t.unjudged);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_task_completed_before_what_it_waits_on_is_said() {
        let said = said(
            &[
                ("1.json", task("1", "in_progress", "alice", &["2"], &[])),
                ("2.json", task("2", "completed", "bob", &[], &["1"])),
            ],
            Roster::default(),
        );
        assert_eq!(
            said,
            ["tasks/2.json is completed, but task 1, which it waits on (blockedBy), is in progress (tasks/1.json): it \
              was marked done before the work it depends on"]
        );
    }

    #[test]
    fn tasks_that_wait_on_each_other_are_named_by_their_cycle() {
        let said = said(
            &[
                ("1.json", task("1", "pending", "", &[], &[])),
                ("2.json", task("2", "pending", "", &["3"], &["3"])),
                ("3.json", task("3", "pending", "", &["2"], &["2"])),
                ("4.json", task("4", "pending", "", &["4"], &["4"])),
            ],
            Roster::default(),
        );
        assert_eq!(
            said,
            [
                "tasks 2 → 3 → 2 wait on each other (blockedBy): none of them can start, a deadlock (tasks/2.json, \
                 tasks/3.json)",
                "tasks/4.json waits on itself (blockedBy): it can never start",
            ]
        );
    }

    #[test]
    fn a_knot_larger_than_its_cycle_says_how_many_more_are_caught() {
        // 1 → 2 → 1 and 2 → 3 → 1: one knot of three, named by its shortest cycle through 1.
        let said = said(
            &[
                ("1.json", task("1", "pending", "", &["2", "3"], &["2"])),
                ("2.json", task("2", "pending", "", &["1"], &["1", "3"])),
                ("3.json", task("3", "pending", "", &["2"], &["1"])),
            ],
            Roster::default(),
        );
        assert_eq!(
            said,
            ["tasks 1 → 2 → 1 wait on each other (blockedBy): none of them can start, a deadlock (tasks/1.json, \
              tasks/2.json); 1 more task caught in the same knot"]
        );
    }

    #[test]
    fn a_long_chain_is_no_knot_and_does_not_overflow_the_stack() {
        let n = 20_000;
        let tasks: Vec<Task> = (1..=n)
            .map(|i| Task {
                place: format!("tasks/{i}.json"),
                id: i.to_string(),
                status: Some(Status::Pending),
                owner: None,
                subject: None,
                blocks: if i < n { vec![(i + 1).to_string()] } else { vec![] },
                blocked_by: if i > 1 { vec![(i - 1).to_string()] } else { vec![] },
            })
            .collect();
        let mut t = Tasks { tasks, whole: true, ..Tasks::default() };
        assert!(alerts(&t, Roster::default()).is_empty());
        // Closed into a ring, it is one knot of them all.
        t.tasks[0].blocked_by.push(n.to_string());
        t.tasks[n - 1].blocks.push("1".into());
        let said = alerts(&t, Roster::default());
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("tasks 1 → 20000 → 19999"), "{}", &said[0][..60]);
    }

    #[test]
    fn blocks_and_blocked_by_that_disagree_are_said_both_ways() {
        let said = said(
            &[
                ("3.json", task("3", "pending", "", &["4"], &[])),
                ("4.json", task("4", "pending", "", &[], &[])),
                ("5.json", task("5", "pending", "", &[], &["3"])),
            ],
            Roster::default(),
        );
        assert_eq!(
            said,
            [
                "tasks/3.json says it blocks task 4, but tasks/4.json does not wait on task 3 (not in its blockedBy): \
                 the two files disagree, and the runtime goes by blockedBy",
                "tasks/5.json waits on task 3 (blockedBy), but tasks/3.json does not say it blocks task 5: the two \
                 files disagree",
            ]
        );
    }

    #[test]
    fn a_link_to_a_task_no_file_holds_is_said() {
        let said =
            said(&[("1.json", task("1", "pending", "", &["7"], &["9"])), (".lock", String::new())], Roster::default());
        assert_eq!(
            said,
            [
                "tasks/1.json waits on task 9, which no file in the folder holds: the runtime counts a missing task as \
                 no blocker",
                "tasks/1.json says it blocks task 7, which no file in the folder holds",
            ]
        );
    }

    #[test]
    fn an_owner_not_on_the_team_and_work_in_progress_of_an_ended_teammate_are_said() {
        let files = [
            ("1.json", task("1", "in_progress", "alcie", &[], &[])),
            ("2.json", task("2", "in_progress", "bob@my-team", &[], &[])),
            ("3.json", task("3", "completed", "bob", &[], &[])),
            ("4.json", task("4", "pending", "alice", &[], &[])),
        ];
        let members = ["team-lead".to_string(), "alice".to_string(), "bob".to_string()];
        let ended = ["bob".to_string()];
        let said = said(&files, Roster { members: &members, ended: &ended, assigned: &[] });
        assert_eq!(
            said,
            [
                "tasks/1.json is owned by alcie, who is not in the team (config.json): nobody on the team is doing it",
                "tasks/2.json is in progress, owned by bob@my-team, whom the runtime said had ended \
                 (teammate_terminated): nobody is working on it (an ended teammate's unfinished tasks are given back \
                 as pending; this one was not)",
            ]
        );
        // Without a roster, an owner's name is not judged.
        assert!(self::said(&files, Roster::default()).is_empty());
        // A task done by a teammate the runtime has since taken off the
        // members (it does so at its shutdown) is no alert; one not done is.
        let gone = [
            ("5.json", task("5", "completed", "carol", &[], &[])),
            ("6.json", task("6", "pending", "carol", &[], &[])),
        ];
        assert_eq!(
            self::said(&gone, Roster { members: &members, ended: &[], assigned: &[] }),
            ["tasks/6.json is owned by carol, who is not in the team (config.json): nobody on the team is doing it"]
        );
    }

    #[test]
    fn a_team_folders_tasks_are_found_inside_it_or_beside_it_as_claude_code_keeps_them() {
        let root = folder(&[]);
        let team = root.join("teams/my-team");
        std::fs::create_dir_all(&team).unwrap();
        assert_eq!(find(&team, Some("my-team")), None);
        std::fs::create_dir_all(root.join("tasks/my-team")).unwrap();
        let beside = find(&team, None).unwrap();
        assert_eq!(beside, std::fs::canonicalize(root.join("tasks/my-team")).unwrap());
        // By the team's name, as the runtime makes a folder name of it.
        let other = root.join("teams/other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::create_dir_all(root.join("tasks/a-b-c")).unwrap();
        assert!(find(&other, Some("a b/c")).unwrap().ends_with("tasks/a-b-c"));
        assert_eq!(find(&other, Some("../..")), None, "never a path out of the tasks folder");
        std::fs::create_dir_all(team.join("tasks")).unwrap();
        assert_eq!(find(&team, None), Some(team.join("tasks")));
        let _ = std::fs::remove_dir_all(root);
    }
}
