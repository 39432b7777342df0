//! The team: each teammate's name, answers and work, and the tables a
//! file writes once for many members.

use super::*;
use std::sync::Arc;

impl Builder<'_> {
    /// Every teammate, `count` expanded, within the bounds on the team's size
    /// and on the work and revisions it may ask for.
    pub(super) fn teammates(&mut self, docs: &[S<TeammateDoc>]) -> Vec<(String, Arc<TeammateSpec>)> {
        let mut out = Vec::new();
        // Lower-cased, so that `alice` and `Alice` are caught: people and logs
        // read them as the same agent, as they do `lead` and `Lead`.
        // Each name with the line of the entry that first gave it.
        let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new();
        let (mut work, mut revisions) = (0u64, 0u64);
        let (mut work_said, mut revisions_said) = (false, false);
        for t in docs {
            let d = t.get_ref();
            let copies = d.count.as_ref().map_or(1, |c| u64::from(*c.get_ref()));
            if out.len() as u64 + copies > limits::MAX_TEAMMATES {
                let message = format!(
                    "with {:?} the team would have {} teammates: a file may ask for at most {}",
                    d.name.get_ref(),
                    out.len() as u64 + copies,
                    limits::MAX_TEAMMATES
                );
                let help = format!("lower `count` so that the team has at most {} teammates", limits::MAX_TEAMMATES);
                self.err(d.name.span(), message).label("the team is too large here").help(help);
                continue;
            }
            let steps: u64 =
                d.work.iter().map(|w| w.get_ref().steps.as_ref().map_or(1, |s| u64::from(*s.get_ref()))).sum();
            work += copies * steps;
            if work > limits::MAX_TEAM_WORK_STEPS && !work_said {
                work_said = true;
                let message = format!(
                    "with {:?} the team's work comes to {work} steps: a file may ask for at most {} steps in all",
                    d.name.get_ref(),
                    limits::MAX_TEAM_WORK_STEPS
                );
                let help = "lower `steps` in the work items, or `count`, up to here";
                self.err(d.name.span(), message).label("the work passes the bound here").help(help);
            }
            revisions += copies * u64::from(d.max_revisions.unwrap_or(3));
            if revisions > limits::MAX_TEAM_REVISIONS && !revisions_said {
                revisions_said = true;
                let message = format!(
                    "with {:?} the team may revise plans {revisions} times: a file may ask for at most {} in all",
                    d.name.get_ref(),
                    limits::MAX_TEAM_REVISIONS
                );
                let help = "lower `max_revisions` (3 when left out), or `count`, up to here";
                self.err(d.name.span(), message).label("the revisions pass the bound here").help(help);
            }
            let before = out.len();
            self.teammate(t, &mut out);
            // Checked per entry, so the error points at the entry that repeats
            // a name, even when `count` expanded it into many.
            let line = self.index.line_col(d.name.span().start).0;
            for (name, _) in &out[before..] {
                match seen.get(&name.to_ascii_lowercase()) {
                    None => {}
                    Some((first, at)) if first == name => {
                        let help = format!("names must be unique: rename one, e.g. \"{}\"", fresh(name, &seen));
                        self.err(d.name.span(), format!("two teammates are named {name:?}"))
                            .label(format!("also given on line {at}"))
                            .help(help);
                        break;
                    }
                    Some((first, at)) => {
                        let message = format!(
                            "teammates {first:?} and {name:?} differ only in case: names must differ in more than case"
                        );
                        let help = format!("rename one, e.g. \"{}\"", fresh(name, &seen));
                        self.err(d.name.span(), message).label(format!("{first:?} is on line {at}")).help(help);
                        break;
                    }
                }
                seen.insert(name.to_ascii_lowercase(), (name.clone(), line));
            }
        }
        out
    }

    /// A teammate's answers to one protocol, and the words its "no" says:
    /// answers that may say no need them (`no` names the answer, then the
    /// label and the help's first words).
    fn answers_saying_why(
        &mut self,
        t: &S<TeammateDoc>,
        (answers, key): (&Option<S<AnswersDoc>>, &str),
        (words, words_key): (&Option<String>, &str),
        (no, label, why): (&str, &str, &str),
    ) -> (Answers, Option<Text>) {
        let parsed = self.answers(answers, key).unwrap_or(Answers::always(Answer::Approve));
        let may_say_no = answers.as_ref().is_some_and(|a| a.get_ref().contains(&Answer::Reject));
        let given = words.as_deref().map(str::trim);
        let words = given.filter(|r| !crate::input::says_nothing(r));
        if let (Some(blank), None) = (given.filter(|g| !g.is_empty()), words) {
            let name = t.get_ref().name.get_ref();
            self.err(t.span(), format!("{name}'s `{words_key}` {blank:?} says nothing: it has no visible character"))
                .label("only blanks or invisible characters")
                .help(format!("{why}: write one a reader can see, like {words_key} = \"tests running\""));
        } else if may_say_no && words.is_none() {
            let span = answers.as_ref().map_or(t.span(), |a| a.span());
            let name = t.get_ref().name.get_ref();
            self.err(span, format!("{name} may {no} but has no `{words_key}`"))
                .label(label)
                .help(format!("{why}: add {words_key} = \"...\" to this [[teammate]]"));
        }
        (parsed, words.map(Text::from))
    }

    fn teammate(&mut self, t: &S<TeammateDoc>, out: &mut Vec<(String, Arc<TeammateSpec>)>) {
        let d = t.get_ref();
        let name = d.name.get_ref();
        if let Err(e) = check_teammate_name(name) {
            let (label, help) = name_fix(&e);
            self.err(d.name.span(), format!("teammate name: {e}")).label(label).help(help);
        }
        let (on_shutdown, reason) = self.answers_saying_why(
            t,
            (&d.on_shutdown, "on_shutdown"),
            (&d.reject_reason, "reject_reason"),
            ("reject a shutdown", "may reject", "a rejection must say why"),
        );
        let (on_task, decline_reason) = self.answers_saying_why(
            t,
            (&d.on_task, "on_task"),
            (&d.decline_reason, "decline_reason"),
            ("decline a task", "may decline", "declining needs a reason"),
        );
        let mut work = Vec::new();
        for w in &d.work {
            if let Some(item) = self.work(w) {
                work.push(item);
            }
        }
        // What the file leaves out is what a teammate does by default.
        let base = TeammateSpec::default();
        let spec = TeammateSpec {
            on_shutdown,
            reject_reason: reason,
            on_plan: self.answers(&d.on_plan, "on_plan").unwrap_or(base.on_plan),
            on_task,
            decline_reason,
            task_steps: d.task_steps.as_ref().map_or(base.task_steps, |n| *n.get_ref()),
            require_plan: d.require_plan,
            plan: d.plan.clone().unwrap_or_else(|| format!("{name}'s plan")).into(),
            work,
            max_revisions: d.max_revisions.unwrap_or(base.max_revisions),
            ..base
        };
        // One behaviour, however many teammates `count` makes of it.
        let spec = Arc::new(spec);
        match &d.count {
            None => out.push((name.clone(), spec)),
            // The reader refused these with its bound; kept against a change there.
            Some(c) if *c.get_ref() == 0 || u64::from(*c.get_ref()) > limits::MAX_TEAMMATES => {
                self.err(c.span(), format!("count must be between 1 and {}", limits::MAX_TEAMMATES))
                    .label("out of bounds")
                    .help(format!("give a count from 1 to {}", limits::MAX_TEAMMATES));
            }
            Some(c) => {
                let last = format!("{name}-{}", c.get_ref());
                if let Err(e) = check_teammate_name(&last) {
                    let message = format!("with count = {}, the names run up to {last:?}: {e}", c.get_ref());
                    let (label, help) = match &e {
                        crate::protocol::NameError::TooLong(_) => (
                            "too long with its number".to_string(),
                            format!(
                                "shorten the name: `count` adds `-` and up to {} digits, within 64 characters",
                                c.get_ref().to_string().len()
                            ),
                        ),
                        other => name_fix(other),
                    };
                    self.err(d.name.span(), message).label(label).help(help);
                    return;
                }
                for i in 1..=*c.get_ref() {
                    out.push((format!("{name}-{i}"), Arc::clone(&spec)));
                }
            }
        }
    }

    fn work(&mut self, w: &S<WorkDoc>) -> Option<WorkItem> {
        let d = w.get_ref();
        let chosen: Vec<(Action, &String)> =
            [(Action::Write, &d.write), (Action::Edit, &d.edit), (Action::Shell, &d.shell), (Action::Read, &d.read)]
                .into_iter()
                .filter_map(|(a, v)| v.as_ref().map(|v| (a, v)))
                .collect();
        let (action, target) = match chosen.as_slice() {
            [one] => *one,
            _ => {
                let found =
                    if chosen.is_empty() { "no action".to_string() } else { format!("{} actions", chosen.len()) };
                self.err(w.span(), "a work item needs exactly one of `write`, `edit`, `shell` or `read`")
                    .label(found)
                    .help("give each action its own item, like work = [{ write = \"a.md\" }, { shell = \"make\" }]");
                return None;
            }
        };
        if crate::input::says_nothing(target) {
            let key = action.as_str();
            self.err(w.span(), format!("a work item's `{key}` {target:?} says nothing"))
                .label(format!("an empty {key}"))
                .help(format!("name what it works on, like {{ {key} = \"src/lib.rs\" }}"));
            return None;
        }
        // At least 1: the reader refused 0 with the bound.
        let steps = d.steps.as_ref().map_or(1, |s| *s.get_ref());
        let step_time = match &d.step_time {
            Some(s) => self.duration(s, "step_time")?,
            None => Millis(100),
        };
        let path = matches!(action, Action::Write | Action::Edit | Action::Read).then(|| Text::from(target.as_str()));
        Some(WorkItem { action, path, steps, step_time })
    }

    /// The tables as written, with each one that names a group (a name
    /// ending in `*`, like `to = "worker-*"`) made once per member: the
    /// teammates whose names start with what comes before the `*`, in the
    /// team's order. So `count` is the one line to change for another team
    /// size. A group step may not carry a label (each copy would need its
    /// own); a group no teammate is in is refused.
    pub(super) fn for_each_member<'d, T: Grouped>(
        &mut self,
        tables: &'d [T],
        team: &Team,
        what: Group,
    ) -> Vec<Cow<'d, T>> {
        let mut out = Vec::with_capacity(tables.len());
        // The copies groups made so far (a table naming no group is bounded
        // as a table).
        let mut copies = 0;
        for t in tables {
            let Some((key, group)) = t.group(what) else {
                out.push(Cow::Borrowed(t));
                continue;
            };
            let prefix = group.get_ref().trim_end_matches('*');
            let members: Vec<&String> = team.names[1..].iter().filter(|n| n.starts_with(prefix)).collect();
            if members.is_empty() {
                self.err(group.span(), format!("no teammate's name starts with {prefix:?}"))
                    .label("an empty group")
                    .help(format!("a name ending in `*` stands for every teammate whose name starts with what comes before it ({}); write an existing prefix, like \"worker-*\" for worker-1, worker-2, ...", team.describe()));
                continue;
            }
            if let Some(l) = t.label() {
                self.err(
                    l.span(),
                    format!(
                        "a step to the group {:?} cannot carry a label: it makes one request per member",
                        group.get_ref()
                    ),
                )
                .label("one label, many requests")
                .help("leave the label out: each member's request has its own, like worker-1/shutdown/1");
                // Said once: an [[expect]] naming the label is not blamed again.
                self.hidden.insert(l.get_ref().clone());
                continue;
            }
            copies += members.len();
            if copies > limits::MAX_GROUPED {
                let what = match what {
                    Group::Step => "steps",
                    Group::Expect => "expectations",
                };
                self.err(
                    group.span(),
                    format!(
                        "the {what} groups make, one per member, come to more than a file may ask for: at most {} in all",
                        limits::MAX_GROUPED
                    ),
                )
                .label(format!("{} more, past the bound", members.len()))
                .help("each table naming a group is made once per member: name a smaller group, or fewer such tables");
                // The bound is said once; what follows is not built.
                break;
            }
            out.extend(members.into_iter().map(|m| Cow::Owned(t.for_member(key, m))));
        }
        out
    }

    pub(super) fn agent(&mut self, s: &S<String>, team: &Team, what: &str) -> Option<AgentId> {
        match team.id(s.get_ref()) {
            Some(id) => Some(id),
            None => {
                let guess = if team.names.len() <= 1000 {
                    let names: Vec<&str> = team.names.iter().map(String::as_str).collect();
                    file::guess(s.get_ref(), &names)
                } else {
                    String::new()
                };
                self.err(s.span(), format!("{what}: no agent is named {:?}", s.get_ref()))
                    .label("no such agent")
                    .help(format!("{guess}the team is {}", team.describe()));
                None
            }
        }
    }
}
