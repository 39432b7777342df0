//! Each `[[expect]]`: what the file says must be true at the end.

use super::*;

impl Builder<'_> {
    pub(super) fn expect(&mut self, e: &S<ExpectDoc>, team: &Team, labels: &Labels) -> Option<Expect> {
        let d = e.get_ref();
        // Keys that belong to another form of [[expect]] would silently check
        // nothing: name them.
        let form: (&str, &[&str]) = if d.request.is_some() {
            ("request", &["request", "status"])
        } else if d.teammate.is_some() {
            ("teammate", &["teammate", "status", "gate"])
        } else if d.file.is_some() {
            ("file", &["file", "state"])
        } else if d.ignored.is_some() {
            ("ignored", &["ignored", "reason"])
        } else if d.refused.is_some() {
            ("refused", &["refused", "rule"])
        } else if d.expired.is_some() {
            ("expired", &["expired"])
        } else if d.deadlock.is_some() {
            ("deadlock", &["deadlock", "broken"])
        } else if d.received.is_some() {
            ("received", &["received", "by", "from", "count"])
        } else if d.inbox.is_some() {
            ("inbox", &["inbox", "lines", "type"])
        } else if d.violation.is_some() {
            ("violation", &["violation"])
        } else {
            // No subject at all: a key of some form, alone, is said to need
            // that form's subject (below), not to clash with `violation`.
            ("", &[])
        };
        let present: [(&str, Option<Range<usize>>); 13] = [
            ("status", d.status.as_ref().map(|x| x.span())),
            ("gate", d.gate.as_ref().map(|x| x.span())),
            ("state", d.state.as_ref().map(|x| x.span())),
            ("reason", d.reason.as_ref().map(|x| x.span())),
            ("rule", d.rule.as_ref().map(|x| x.span())),
            ("request", d.request.as_ref().map(|x| x.span())),
            ("teammate", d.teammate.as_ref().map(|x| x.span())),
            ("broken", d.broken.map(|_| e.span())),
            ("by", d.by.as_ref().map(|x| x.span())),
            ("from", d.from.as_ref().map(|x| x.span())),
            ("count", d.count.map(|_| e.span())),
            ("lines", d.lines.map(|_| e.span())),
            ("type", d.of_type.as_ref().map(|x| x.span())),
        ];
        let mut stray = false;
        for (key, span) in present {
            if let Some(span) = span {
                if form.0.is_empty() {
                    let owner = subject_of(key);
                    self.err(span, format!("`{key}` needs {owner} in its [[expect]], which names nothing to check"))
                        .label(format!("{owner} missing"))
                        .help(format!("an [[expect]] says what it checks first: add {owner}, or remove `{key}`"));
                    stray = true;
                } else if !form.1.contains(&key) {
                    let with = form.1[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                    let takes = if with.is_empty() { "nothing else".to_string() } else { with };
                    self.err(span, format!("`{key}` does not go with `{}` in an [[expect]]", form.0))
                        .label(format!("not for `{}`", form.0))
                        .help(format!(
                            "remove `{key}`, or check it in an [[expect]] of its own; `{}` takes {takes}",
                            form.0
                        ));
                    stray = true;
                }
            }
        }
        if let (Some(_), Some(g), Some(_)) = (&d.teammate, &d.gate, &d.status) {
            self.err(g.span(), "an [[expect]] on a teammate checks `status` or `gate`, not both")
                .label("and `status` too")
                .help("write two [[expect]] entries, one with `status` and one with `gate`");
            stray = true;
        }
        if stray {
            return None;
        }
        let subjects = [
            d.request.is_some(),
            d.teammate.is_some(),
            d.file.is_some(),
            d.ignored.is_some(),
            d.refused.is_some(),
            d.expired.is_some(),
            d.violation.is_some(),
            d.deadlock.is_some(),
            d.received.is_some(),
            d.inbox.is_some(),
        ];
        let checked = subjects.iter().filter(|x| **x).count();
        if checked != 1 {
            // Nothing or several things to point at: the whole entry is shown.
            self.err(
                e.span(),
                "an [[expect]] checks one thing: request, teammate, file, ignored, refused, expired, deadlock, \
                 received, inbox or violation",
            )
            .label(if checked == 0 { "checks nothing".to_string() } else { format!("checks {checked} things") })
            .help(if checked == 0 {
                "add what to check, like request = \"stop-alice\" with status = \"approved\""
            } else {
                "write one [[expect]] for each thing checked"
            });
            return None;
        }
        if let Some(r) = &d.received {
            return self.expect_received(d, r, team);
        }
        if let Some(owner) = &d.inbox {
            return self.expect_inbox(d, owner, team);
        }
        if let Some(r) = &d.request {
            return self.expect_request(d, r, team, labels);
        }
        if let Some(t) = &d.teammate {
            return self.expect_teammate(d, t, team);
        }
        if let Some(f) = &d.file {
            return self.expect_file(d, f);
        }
        if let Some(count) = d.ignored {
            return self.expect_ignored(d, count);
        }
        if let Some(count) = d.refused {
            return self.expect_refused(d, count);
        }
        if let Some(count) = d.expired {
            return Some(Expect::Expired { count });
        }
        if let Some(members) = &d.deadlock {
            return self.expect_deadlock(d, members, team);
        }
        self.expect_violation(d.violation.as_ref()?)
    }

    /// A received message: its type, who received it, from whom, how often.
    fn expect_received(&mut self, d: &ExpectDoc, r: &S<String>, team: &Team) -> Option<Expect> {
        // Each key is checked, whatever the others are.
        let message_type = self.message_type(r);
        let Some(by) = &d.by else {
            self.err(r.span(), "expect on a received message needs `by` (who received it)")
                .label("received by whom?")
                .help("add the agent that received it, like by = \"alice\"");
            return None;
        };
        let by_known = self.agent(by, team, "by").is_some();
        let from_known = d.from.as_ref().is_none_or(|f| self.agent(f, team, "from").is_some());
        let from = d.from.as_ref().map(|f| f.get_ref().clone());
        let message_type = message_type.filter(|_| by_known && from_known)?;
        Some(Expect::Received { message_type, by: by.get_ref().clone(), from, count: d.count })
    }

    /// An inbox file's lines (file mode) or entries (Claude Code mode) at the end.
    fn expect_inbox(&mut self, d: &ExpectDoc, owner: &S<String>, team: &Team) -> Option<Expect> {
        let known = self.agent(owner, team, "inbox").is_some();
        if !self.file_mode && !self.claude_code {
            self.err(
                owner.span(),
                "expect on an inbox's lines needs mailbox = \"file\" or \"claude-code\": memory mailboxes leave \
                 no file",
            )
            .label("no inbox file")
            .help("set mailbox = \"file\" or mailbox = \"claude-code\" in [policy]");
            return None;
        }
        let Some(lines) = d.lines else {
            self.err(owner.span(), "expect on an inbox needs `lines` (how many lines its file holds at the end)")
                .label("no `lines`")
                .help("add how many lines the file holds at the end, like lines = 2");
            return None;
        };
        let message_type = match &d.of_type {
            Some(t) => Some(self.message_type(t)?),
            None => None,
        };
        if !known {
            return None;
        }
        Some(Expect::InboxLines { owner: owner.get_ref().clone(), lines, message_type, entries: self.claude_code })
    }

    /// A request's end state.
    fn expect_request(&mut self, d: &ExpectDoc, r: &S<String>, team: &Team, labels: &Labels) -> Option<Expect> {
        // The label and the status are each checked, whatever the other is.
        let known = self.label(r, team, labels).is_some();
        let Some(s) = d.status.as_ref() else {
            self.err(r.span(), "expect on a request needs `status` (approved, rejected, expired or pending)")
                .label("no `status`")
                .help("add the request's end state, like status = \"approved\"");
            return None;
        };
        let status = match s.get_ref().as_str() {
            "pending" => Status::Pending,
            "approved" => Status::Approved,
            "rejected" => Status::Rejected,
            "expired" => Status::Expired,
            other => {
                let help = file::one_of(other, &["approved", "rejected", "expired", "pending"]);
                self.err(s.span(), format!("request status {other:?} is not a status"))
                    .label("unknown status")
                    .help(help);
                return None;
            }
        };
        known.then(|| Expect::Request { label: r.get_ref().trim_start_matches('@').to_string(), status })
    }

    /// A teammate's end status, or its plan gate's state.
    fn expect_teammate(&mut self, d: &ExpectDoc, t: &S<String>, team: &Team) -> Option<Expect> {
        let id = self.agent(t, team, "teammate")?;
        if id.is_lead() {
            let first = team.names.get(1).map_or("alice", String::as_str);
            self.err(t.span(), "the lead is not a teammate: expect on one of the teammates")
                .label("the lead")
                .help(format!("name a teammate, like teammate = \"{first}\""));
            return None;
        }
        let name = t.get_ref().clone();
        if let Some(g) = &d.gate {
            let state = match g.get_ref().as_str() {
                "not_required" => GateState::NotRequired,
                "required" => GateState::Required,
                "pending" => GateState::Pending,
                "approved" => GateState::Approved,
                "rejected" => GateState::Rejected,
                other => {
                    let help = file::one_of(other, &["not_required", "required", "pending", "approved", "rejected"]);
                    self.err(g.span(), format!("gate state {other:?} is not a gate state"))
                        .label("unknown gate state")
                        .help(help);
                    return None;
                }
            };
            return Some(Expect::Gate { name, state });
        }
        let Some(s) = d.status.as_ref() else {
            self.err(t.span(), "expect on a teammate needs `status` (or `gate`)").label("no `status`").help(
                "add the teammate's end status, like status = \"shutdown\", or its gate, like gate = \"approved\"",
            );
            return None;
        };
        let status = match s.get_ref().as_str() {
            "working" => RosterStatus::Working,
            "waiting_approval" => RosterStatus::WaitingApproval,
            "idle" => RosterStatus::Idle,
            "shutdown" => RosterStatus::Shutdown,
            "killed" => RosterStatus::Killed,
            "crashed" => RosterStatus::Crashed,
            other => {
                let statuses = ["working", "waiting_approval", "idle", "shutdown", "killed", "crashed"];
                self.err(s.span(), format!("teammate status {other:?} is not a status"))
                    .label("unknown status")
                    .help(file::one_of(other, &statuses));
                return None;
            }
        };
        Some(Expect::Teammate { name, status })
    }

    /// A file's end state.
    fn expect_file(&mut self, d: &ExpectDoc, f: &S<String>) -> Option<Expect> {
        let Some(s) = &d.state else {
            self.err(f.span(), "expect on a file needs `state` (complete, partial or absent)")
                .label("no `state`")
                .help("add the file's end state, like state = \"complete\"");
            return None;
        };
        let state = match s.get_ref().as_str() {
            "complete" => FileExpect::Complete,
            "partial" => FileExpect::Partial,
            "absent" => FileExpect::Absent,
            other => {
                let help = file::one_of(other, &["complete", "partial", "absent"]);
                self.err(s.span(), format!("file state {other:?} is not a file state"))
                    .label("unknown state")
                    .help(help);
                return None;
            }
        };
        Some(Expect::File { path: f.get_ref().clone(), state })
    }

    /// How many answers were ignored, maybe for one reason.
    fn expect_ignored(&mut self, d: &ExpectDoc, count: u32) -> Option<Expect> {
        let reason = match &d.reason {
            None => None,
            Some(r) => match Reason::parse(r.get_ref()) {
                Some(reason) => Some(reason),
                None => {
                    let names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
                    let help = file::one_of(r.get_ref(), &names);
                    self.err(r.span(), format!("reason {:?} is not a reason", r.get_ref()))
                        .label("unknown reason")
                        .help(help);
                    return None;
                }
            },
        };
        Some(Expect::Ignored { count, reason })
    }

    /// How many sends were refused, maybe by one rule.
    fn expect_refused(&mut self, d: &ExpectDoc, count: u32) -> Option<Expect> {
        if let Some(r) = &d.rule {
            if !SendError::all().iter().any(|e| e.rule() == r.get_ref()) {
                let names: Vec<&str> = SendError::all().iter().map(|e| e.rule()).collect();
                let help = file::one_of(r.get_ref(), &names);
                self.err(r.span(), format!("rule {:?} is not a rule", r.get_ref())).label("unknown rule").help(help);
                return None;
            }
        }
        Some(Expect::Refused { count, rule: d.rule.as_ref().map(|r| r.get_ref().clone()) })
    }

    /// A wait-for cycle among teammates, maybe broken.
    fn expect_deadlock(&mut self, d: &ExpectDoc, members: &S<Vec<String>>, team: &Team) -> Option<Expect> {
        if members.get_ref().len() < 2 {
            self.err(members.span(), "a deadlock needs at least two teammates waiting on each other")
                .label(format!("{} named", members.get_ref().len()))
                .help("name every teammate in the cycle, like deadlock = [\"alice\", \"bob\"]");
            return None;
        }
        for (i, name) in members.get_ref().iter().enumerate() {
            if members.get_ref()[..i].contains(name) {
                self.err(members.span(), format!("deadlock names {name:?} twice"))
                    .label(format!("{name:?} twice"))
                    .help("list each teammate in the deadlock once");
                return None;
            }
            let named = S::new(members.span(), name.clone());
            let id = self.agent(&named, team, "deadlock")?;
            if id.is_lead() {
                self.err(members.span(), "the lead never blocks, so it is never part of a deadlock")
                    .label("names the lead")
                    .help("list only teammates, like deadlock = [\"alice\", \"bob\"]");
                return None;
            }
        }
        Some(Expect::Deadlock { members: members.get_ref().clone(), broken: d.broken })
    }

    /// A violation the file expects: allowed only where a defence is off
    /// (or, for no-silent-loss, where the inboxes lose messages by design:
    /// a truncating drain, or Claude Code's with a switch of its own off).
    fn expect_violation(&mut self, v: &S<String>) -> Option<Expect> {
        // A name that is no invariant is said first: whether it could happen
        // here is no question until it names one.
        let Some(invariant) = Invariant::parse(v.get_ref()) else {
            let names: Vec<&str> = Invariant::all().iter().map(|i| i.name()).collect();
            let help = file::one_of(v.get_ref(), &names);
            self.err(v.span(), format!("unknown invariant {:?}", v.get_ref())).label("unknown invariant").help(help);
            return None;
        };
        let allowed = |i| may_expect(self.all_defences_on, self.lossy_inboxes, i);
        if self.lossy_inboxes && !allowed(invariant) {
            self.err(
                v.span(),
                format!(
                    "with every defence on, inboxes that lose messages by design (drain = \"truncate\"; lock = \"off\", \
                 mark_read = \"all\" or recipients = \"any\") let a file expect no-silent-loss only: a {} violation \
                 is a bug, not an expectation",
                    v.get_ref()
                ),
            )
            .label("cannot happen here")
            .help("switch a defence off in [policy.defences] to show what it prevents, or expect no-silent-loss");
            return None;
        }
        // Not even no-silent-loss: with these settings nothing may be expected.
        if !allowed(Invariant::NoSilentLoss) {
            self.err(
                v.span(),
                "expecting a violation needs a defence switched off ([policy.defences]), or, for no-silent-loss \
             only, inboxes that lose messages by design (drain = \"truncate\" with mailbox = \"file\"; lock = \"off\", \
             mark_read = \"all\" or recipients = \"any\" with mailbox = \"claude-code\"); with all on, none can happen",
            )
            .label("cannot happen with every defence on")
            .help(
                "switch one off, like [policy.defences] with sender_check = false, or remove this [[expect]]; to \
                 watch the run with a defence back on, keep the file as it was and play it beside its change: \
                 `run FILE --html page.html --compare deadline_check=true`",
            );
            return None;
        }
        Some(Expect::Violation(invariant))
    }
}

/// The subject an [[expect]] key goes with: what an entry holding the key
/// alone lacks.
fn subject_of(key: &str) -> &'static str {
    match key {
        "status" => "`request` or `teammate`",
        "gate" => "`teammate`",
        "state" => "`file`",
        "reason" => "`ignored`",
        "rule" => "`refused`",
        "broken" => "`deadlock`",
        "by" | "from" | "count" => "`received`",
        "lines" | "type" => "`inbox`",
        _ => "a subject",
    }
}
