//! The run's bounds and its policy: `end` and `cap`, the timeouts, the
//! mailbox and its inbox files.

use super::*;

impl Builder<'_> {
    /// The run's end and cap: each at most `MAX_RUN`, and an end the cap
    /// would cut short says how to raise the cap.
    pub(super) fn end_and_cap(&mut self, doc: &FileDoc) -> (Option<Millis>, Millis) {
        // Virtual time is cheap, but tokio clamps timers past about two years
        // and the driver would spin: a year is more than any scenario needs,
        // and `duration` refuses more.
        let end = doc.end.as_ref().and_then(|e| self.duration(e, "end"));
        let cap = doc.cap.as_ref().and_then(|c| self.duration(c, "cap"));
        if let (Some(e), Some(given)) = (end, &doc.end) {
            let wanted = human(e);
            match cap {
                None if e > DEFAULT_CAP => {
                    let message = format!(
                        "end = {wanted} comes after the default cap ({}): the run would stop there first",
                        human(DEFAULT_CAP)
                    );
                    self.err(given.span(), message)
                        .label("after the cap")
                        .help(format!("raise it with cap = \"{wanted}\""));
                }
                Some(c) if e > c => {
                    let message = format!(
                        "end = {wanted} comes after the cap ({}): the run would stop at the cap first",
                        human(c)
                    );
                    self.err(given.span(), message)
                        .label("after the cap")
                        .help(format!("raise it to cap = \"{wanted}\" or end earlier"));
                }
                _ => {}
            }
        }
        (end, cap.unwrap_or(DEFAULT_CAP))
    }

    /// The file's policy; a timeout it writes must fit within the run's `cap`.
    pub(super) fn policy(&mut self, doc: &FileDoc, cap: Millis) -> Policy {
        let p = &doc.policy;
        let mut policy = Policy::default();
        for k in Kind::ALL {
            let i = k.index();
            if let Some(d) = &p.timeouts_by_kind[i] {
                policy.timeouts[i] = self.timeout(d, k.spec().timeout_key, policy.timeouts[i]);
            }
            if let Some(x) = p.on_expiry[i] {
                policy.on_expiry[i] = x;
            }
        }
        if let Some(x) = p.strict_hierarchy {
            policy.strict_hierarchy = x;
        }
        if let Some(d) = p.defences {
            policy.defences = d;
        }
        if p.timeouts == Some(false) {
            policy.timeouts = [Millis::NEVER; Kind::COUNT];
        }
        if let Some(d) = &p.deadlocks {
            match d.get_ref().as_str() {
                "fail" => policy.fail_on_deadlock = true,
                "allow" => policy.fail_on_deadlock = false,
                other => {
                    let help = format!("{}use \"fail\" or \"allow\"", file::guess(other, &["fail", "allow"]));
                    self.err(d.span(), format!("deadlocks = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                }
            }
        }
        self.timeouts_within(doc, &policy, cap);
        policy
    }

    /// The mailbox world and its settings. A key of another world than the
    /// file's would do nothing: refused, naming the world it belongs to.
    pub(super) fn mailbox(&mut self, doc: &FileDoc) -> MailboxWorld {
        let p = &doc.policy;
        let name = match &p.mailbox {
            None => "memory",
            Some(m) => match MailboxWorld::NAMES.iter().find(|n| **n == m.get_ref().as_str()) {
                Some(n) => n,
                None => {
                    let other = m.get_ref();
                    let help = format!(
                        "{}use \"memory\", \"file\" or \"claude-code\"",
                        file::guess(other, MailboxWorld::NAMES)
                    );
                    self.err(m.span(), format!("mailbox = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                    "memory"
                }
            },
        };
        // Each inbox key and the worlds it belongs to, the first named in the fix.
        const FILE: &[&str] = &["file"];
        const CLAUDE: &[&str] = &["claude-code"];
        const EITHER: &[&str] = &["file", "claude-code"];
        let keys = [
            ("drain", p.drain.as_ref().map(|x| x.span()), FILE),
            ("prune", p.prune.as_ref().map(|x| x.span()), FILE),
            ("lock", p.lock.as_ref().map(|x| x.span()), CLAUDE),
            ("mark_read", p.mark_read.as_ref().map(|x| x.span()), CLAUDE),
            ("recipients", p.recipients.as_ref().map(|x| x.span()), CLAUDE),
            ("inbox_poll", p.inbox_poll.as_ref().map(|x| x.span()), EITHER),
            ("read_cost", p.read_cost.as_ref().map(|x| x.span()), EITHER),
            ("read_cost_per_kib", p.read_cost_per_kib.as_ref().map(|x| x.span()), EITHER),
        ];
        for (key, span, worlds) in keys {
            let Some(span) = span.filter(|_| !worlds.contains(&name)) else { continue };
            let world = worlds[0];
            let which = if world == "claude-code" { "Claude Code inboxes" } else { "file inboxes" };
            self.err(span, format!("`{key}` applies to {which} only: set mailbox = \"{world}\" in [policy]"))
                .label(format!("{which} only"))
                .help(format!("add mailbox = \"{world}\" to [policy], or remove `{key}`"));
        }
        match name {
            "file" => MailboxWorld::File(self.file_mailbox(p)),
            "claude-code" => MailboxWorld::ClaudeCode(self.team_mailbox(p)),
            _ => MailboxWorld::Memory,
        }
    }

    /// The poll and read cost, which both inbox worlds take.
    fn poll_and_cost(&mut self, p: &PolicyDoc, poll: &mut Millis, cost: &mut ReadCost) {
        if let Some(d) = &p.inbox_poll {
            if let Some(t) = self.duration(d, "inbox_poll") {
                if t == Millis::ZERO {
                    self.err(d.span(), "inbox_poll = \"0ms\": an owner would read without end; use at least \"1ms\"")
                        .label("zero")
                        .help("give at least \"1ms\", like inbox_poll = \"1ms\"");
                } else {
                    *poll = t;
                }
            }
        }
        if let Some(d) = &p.read_cost {
            if let Some(t) = self.duration(d, "read_cost") {
                cost.per_read = t;
            }
        }
        if let Some(d) = &p.read_cost_per_kib {
            if let Some(t) = self.duration(d, "read_cost_per_kib") {
                cost.per_kib = t;
            }
        }
    }

    /// Claude Code mode's settings.
    fn team_mailbox(&mut self, p: &PolicyDoc) -> TeamMailbox {
        let mut m = TeamMailbox::default();
        self.poll_and_cost(p, &mut m.poll, &mut m.cost);
        if let Some(x) = self.one_of(&p.lock, "lock", &["on", "off"]) {
            m.lock = x == "on";
        }
        if let Some(x) = self.one_of(&p.mark_read, "mark_read", &["shown", "all"]) {
            m.mark_all = x == "all";
        }
        if let Some(x) = self.one_of(&p.recipients, "recipients", &["team", "any"]) {
            m.check_recipients = x == "team";
        }
        m
    }

    /// A setting that must be one of `allowed`, or an error naming them.
    fn one_of(&mut self, v: &Option<S<String>>, key: &str, allowed: &[&'static str]) -> Option<&'static str> {
        let v = v.as_ref()?;
        if let Some(x) = allowed.iter().find(|a| **a == v.get_ref().as_str()) {
            return Some(x);
        }
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let help = format!("{}use {}", file::guess(v.get_ref(), allowed), quoted.join(" or "));
        self.err(v.span(), format!("{key} = {:?} is not a setting", v.get_ref())).label("unknown setting").help(help);
        None
    }

    /// File mode's settings.
    fn file_mailbox(&mut self, p: &PolicyDoc) -> FileMailbox {
        let mut m = FileMailbox::default();
        if let Some(d) = &p.drain {
            match d.get_ref().as_str() {
                "truncate" => m.drain = Drain::ReadThenTruncate,
                "offset" => m.drain = Drain::CommittedOffset,
                other => {
                    let help = format!("{}use \"truncate\" or \"offset\"", file::guess(other, &["truncate", "offset"]));
                    self.err(d.span(), format!("drain = {other:?} is not a setting"))
                        .label("unknown setting")
                        .help(help);
                }
            }
        }
        self.poll_and_cost(p, &mut m.poll, &mut m.cost);
        if let Some(x) = &p.prune {
            m.prune = *x.get_ref();
            // A truncating drain empties the file at every read: nothing is
            // left before a committed position to cut.
            if m.prune && m.drain == Drain::ReadThenTruncate {
                let drain = if p.drain.is_some() { "drain = \"truncate\"" } else { "the default drain (\"truncate\")" };
                self.err(
                    x.span(),
                    format!("prune = true does nothing with {drain}, which empties the file at every read"),
                )
                .label("does nothing here")
                .help("prune works with drain = \"offset\": set it in [policy], or leave prune out");
            }
        }
        m
    }

    /// A timeout the file writes that is longer than the run may last would
    /// never fire: the run stops at its cap first. Refused, naming the cap
    /// (`"never"` says no deadline, and is taken).
    fn timeouts_within(&mut self, doc: &FileDoc, policy: &Policy, cap: Millis) {
        // A cap the file writes that does not read is said once, as such;
        // the default cap in its place would name a cap nobody wrote.
        if doc.cap.as_ref().is_some_and(|c| parse_duration(c.get_ref()).map_or(true, |c| c > MAX_RUN)) {
            return;
        }
        for k in Kind::ALL {
            let (Some(written), t) = (&doc.policy.timeouts_by_kind[k.index()], policy.timeouts[k.index()]) else {
                continue;
            };
            if t.is_never() || t <= cap {
                continue;
            }
            let key = k.spec().timeout_key;
            let capped = if doc.cap.is_some() { "the file's cap" } else { "the default cap" };
            self.err(
                written.span(),
                format!("{key} = {t} is longer than the run may last ({capped}, {}): it could never fire", human(cap)),
            )
            .label(format!("after the cap ({})", human(cap)))
            .help(format!(
                "raise the cap with cap = \"{t}\", give a timeout of at most \"{}\", or {key} = \"never\" for no \
                 deadline",
                human(cap)
            ));
        }
    }

    /// A timeout of zero would expire every request the moment it is sent.
    fn timeout(&mut self, d: &S<String>, key: &str, default: Millis) -> Millis {
        // No deadline at all: a learner watches a deadlock last to the cap.
        if d.get_ref() == "never" {
            return Millis::NEVER;
        }
        let Some(t) = self.duration(d, key) else { return default };
        if t == Millis::ZERO {
            let shown = human(default);
            self.err(
                d.span(),
                format!(
                    "{key} = {:?}: every request would expire the moment it is sent; \
                     use at least \"1ms\" (the default is \"{shown}\")",
                    d.get_ref()
                ),
            )
            .label("zero")
            .help(format!(
                "give at least \"1ms\", like {key} = \"{shown}\" (the default), or {key} = \"never\" for no deadline"
            ));
            return default;
        }
        t
    }
}
